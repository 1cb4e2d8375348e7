package engine

// HealthOff turns the generator's health measurement off for the run c
// configures, so that a benchmark can measure what it costs.
func HealthOff(c *Config) { c.healthOff = true }
