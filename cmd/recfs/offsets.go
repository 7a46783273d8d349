package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// addOffsetFlag registers --offset: records selected by the number their
// format gives them (Kafka offsets) instead of by record number.
func addOffsetFlag(cmd *cobra.Command) *[]string {
	offs := new([]string)
	cmd.Flags().StringSliceVar(offs, "offset", nil, "select records by Kafka offset: N, A-B (inclusive) or A-; repeat or separate with commas")
	return offs
}

// seqRange is an inclusive range of format numbers.
type seqRange struct{ lo, hi int64 }

// parseOffsets parses --offset values: "N", "A-B" and "A-".
func parseOffsets(specs []string) ([]seqRange, error) {
	var out []seqRange
	for _, s := range specs {
		lo, hi, isRange := strings.Cut(s, "-")
		l, err := strconv.ParseInt(lo, 10, 64)
		if err != nil || l < 0 {
			return nil, usagef("--offset %q: want N, A-B or A-", s)
		}
		r := seqRange{l, l}
		switch {
		case isRange && hi == "":
			r.hi = math.MaxInt64
		case isRange:
			if r.hi, err = strconv.ParseInt(hi, 10, 64); err != nil || r.hi < l {
				return nil, usagef("--offset %q: want A-B with A <= B", s)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// offsetRanges resolves --offset values against t: the records whose
// offsets they name, as record ranges in the order given. An offset (or a
// range) that names no record is an error saying which offsets the file
// holds; a format without offsets is a usage error.
func offsetRanges(t *index.Table, path string, specs []seqRange) ([]recordRange, error) {
	if !t.HasSeq() {
		return nil, usagef("--offset: %s is a %v file, whose records have no offsets (Kafka segments' do); select records by number", path, t.Format())
	}
	var out []recordRange
	for _, r := range specs {
		found := false
		t.SeqRecords(r.lo, r.hi, func(n int64) bool {
			found = true
			if k := len(out) - 1; k >= 0 && out[k].hi == n {
				out[k].hi++
			} else {
				out = append(out, recordRange{lo: n, hi: n + 1})
			}
			return true
		})
		if !found {
			return nil, fmt.Errorf("no record at %s %s in %s (%s)", seqWord(t), r, path, seqSpan(t))
		}
	}
	return out, nil
}

// String formats r as --offset takes it.
func (r seqRange) String() string {
	switch {
	case r.lo == r.hi:
		return strconv.FormatInt(r.lo, 10)
	case r.hi == math.MaxInt64:
		return strconv.FormatInt(r.lo, 10) + "-"
	}
	return fmt.Sprintf("%d-%d", r.lo, r.hi)
}

// seqWord names the numbers of t's records for messages.
func seqWord(t *index.Table) string {
	if t.Format() == codec.Kafka {
		return "Kafka offset"
	}
	return "sequence number"
}

// seqField names the numbers of t's records in JSON output.
func seqField(t *index.Table) string {
	if t.Format() == codec.Kafka {
		return "kafka_offset"
	}
	return "seq"
}

// seqSpan says which numbers t's records have: "offsets 100-250" or "no
// records".
func seqSpan(t *index.Table) string {
	if t.Len() == 0 {
		return "it holds no records"
	}
	first, _ := t.Seq(0)
	last, _ := t.Seq(t.Len() - 1)
	return fmt.Sprintf("its records have offsets %d to %d", first, last)
}
