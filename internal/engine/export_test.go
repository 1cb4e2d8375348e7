package engine

// SetHealthOff turns the generator's health measurement off (true) or on
// for the runs that follow, so that a benchmark can measure what it costs.
func SetHealthOff(off bool) { healthOff = off }
