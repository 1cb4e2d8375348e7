package config

import (
	"math/big"

	"github.com/metronome-load/metronome/executor/segment"
	"github.com/metronome-load/metronome/exitcode"
)

// ExecutionTuple reads the executionSegment and executionSegmentSequence
// options: this instance's part of the test within the split shared by all
// instances. It returns nil when neither is set or they leave the whole
// test here. Errors carry exit code 104 and name the option.
func (o *Options) ExecutionTuple() (*segment.Tuple, error) {
	segStr, seqStr := "", ""
	if o.ExecutionSegment != nil {
		segStr = *o.ExecutionSegment
	}
	if o.ExecutionSegmentSequence != nil {
		seqStr = *o.ExecutionSegmentSequence
	}
	if segStr == "" && seqStr == "" {
		return nil, nil
	}
	seg, err := segment.Parse(segStr)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.InvalidConfig, "options.executionSegment: %v", err)
	}
	var seq []*big.Rat
	if seqStr != "" {
		if seq, err = segment.ParseSequence(seqStr); err != nil {
			return nil, exitcode.Errorf(exitcode.InvalidConfig, "options.executionSegmentSequence: %v", err)
		}
	}
	t, err := segment.NewTuple(seg, seq)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.InvalidConfig, "options.executionSegment: %v", err)
	}
	if t.Length() == 1 {
		return nil, nil
	}
	return t, nil
}
