package report

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// Range is a half-open range [Lo, Hi) of record numbers; Hi < 0 means "to
// the last record". Last > 0 selects the last records instead: as many as
// it says (all of them in a shorter file).
type Range struct{ Lo, Hi, Last int64 }

// String formats r for messages and tests: "{lo hi}" or "last:K".
func (r Range) String() string {
	if r.Last > 0 {
		return LastPrefix + strconv.FormatInt(r.Last, 10)
	}
	return fmt.Sprintf("{%d %d}", r.Lo, r.Hi)
}

// LastPrefix starts a selection counted from the end ("last:10"); a
// leading minus would read as a flag.
const LastPrefix = "last:"

// SplitOperands splits a command line of files and record selections,
// FILE... [SELECTION...], into the files (the first word, and each one
// after it up to the first that parses as a selection) and the selections
// (ParseRanges). A word shaped like a selection (a digit first, or
// last:, after an optional minus) but malformed, such as "5-3" or
// "last:0", is a [UsageError] unless stat (os.Stat) finds a file of that
// name; so is a word after the first selection that is none ("f 3 g").
func SplitOperands(args []string, stat func(name string) (os.FileInfo, error)) (files []string, sel []Range, err error) {
	i := min(1, len(args))
	for ; i < len(args); i++ {
		_, err := ParseRanges(args[i : i+1])
		if err == nil {
			break
		}
		if _, serr := stat(args[i]); serr != nil && looksLikeSelection(args[i]) {
			return nil, nil, err // a selection mistyped, not a file
		}
	}
	sel, err = ParseRanges(args[i:])
	if err != nil {
		return nil, nil, Usagef("%v (the files come first: FILE... SELECTION...)", err)
	}
	return args[:i], sel, nil
}

// looksLikeSelection reports whether a word starts as a record selection
// does (a digit, or last:), or as one counted from the end with a minus.
func looksLikeSelection(a string) bool {
	a = strings.TrimPrefix(a, "-")
	return strings.HasPrefix(a, LastPrefix) || a != "" && a[0] >= '0' && a[0] <= '9'
}

// ParseRanges parses record selections: "N", "A-B" (inclusive), "A-"
// (from A to the last record) and "last:K" (the last K records). A
// malformed selection is a [UsageError].
func ParseRanges(args []string) ([]Range, error) {
	out := make([]Range, 0, len(args))
	for _, a := range args {
		if k, ok := strings.CutPrefix(a, LastPrefix); ok {
			v, err := strconv.ParseInt(k, 10, 64)
			if err != nil || v < 1 || k != strconv.FormatInt(v, 10) {
				return nil, Usagef("bad record selection %q (want last:K with K >= 1)", a)
			}
			out = append(out, Range{Lo: 0, Hi: -1, Last: v})
			continue
		}
		lo, hi, isRange := strings.Cut(a, "-")
		l, err := strconv.ParseInt(lo, 10, 64)
		if err != nil || l < 0 {
			return nil, Usagef("bad record selection %q (want N, A-B, A- or last:K)", a)
		}
		switch {
		case !isRange:
			out = append(out, Range{Lo: l, Hi: l + 1})
		case hi == "":
			out = append(out, Range{Lo: l, Hi: -1})
		default:
			h, err := strconv.ParseInt(hi, 10, 64)
			if err != nil || h < l || h == 1<<63-1 {
				return nil, Usagef("bad record selection %q (want N, A-B with A <= B, or A-)", a)
			}
			out = append(out, Range{Lo: l, Hi: h + 1})
		}
	}
	return out, nil
}

// Resolve fixes open ends against n records and checks every range lies
// inside [0, n). No ranges selects every record.
func Resolve(rs []Range, n int64) ([]Range, error) {
	if len(rs) == 0 {
		return []Range{{Lo: 0, Hi: n}}, nil
	}
	out := make([]Range, len(rs))
	for i, r := range rs {
		if r.Last > 0 {
			out[i] = Range{Lo: max(0, n-r.Last), Hi: n}
			continue
		}
		if r.Hi < 0 {
			r.Hi = max(n, r.Lo+1)
		}
		if r.Hi > n {
			bad := max(r.Lo, n)
			if n == 0 {
				return nil, fmt.Errorf("record %d is out of range: the file has no records", bad)
			}
			return nil, fmt.Errorf("record %d is out of range: the file has %d records (0-%d)", bad, n, n-1)
		}
		out[i] = r
	}
	return out, nil
}

// Count returns how many records the resolved ranges select.
func Count(rs []Range) int64 {
	var n int64
	for _, r := range rs {
		n += r.Hi - r.Lo
	}
	return n
}

// FollowStart returns the record a follow starts at, from its selection:
// none (0), A- (A) or last:K (resolved when the table is open, so returned
// as last = K). Any other selection is a [UsageError].
func FollowStart(sel []Range) (start, last int64, err error) {
	switch {
	case len(sel) == 0:
		return 0, 0, nil
	case len(sel) > 1:
	case sel[0].Last > 0:
		return 0, sel[0].Last, nil
	case sel[0].Hi < 0:
		return sel[0].Lo, 0, nil
	}
	return 0, 0, Usagef("--follow writes records as they come: give no selection, A- (from record A) or last:K")
}

// SeqRange is an inclusive range of the numbers a format gives its records
// (Kafka offsets).
type SeqRange struct{ Lo, Hi int64 }

// ParseOffsets parses --offset values: "N", "A-B" and "A-".
func ParseOffsets(specs []string) ([]SeqRange, error) {
	var out []SeqRange
	for _, s := range specs {
		lo, hi, isRange := strings.Cut(s, "-")
		l, err := strconv.ParseInt(lo, 10, 64)
		if err != nil || l < 0 {
			return nil, Usagef("--offset %q: want N, A-B or A-", s)
		}
		r := SeqRange{l, l}
		switch {
		case isRange && hi == "":
			r.Hi = math.MaxInt64
		case isRange:
			if r.Hi, err = strconv.ParseInt(hi, 10, 64); err != nil || r.Hi < l {
				return nil, Usagef("--offset %q: want A-B with A <= B", s)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// String formats r as --offset takes it.
func (r SeqRange) String() string {
	switch {
	case r.Lo == r.Hi:
		return strconv.FormatInt(r.Lo, 10)
	case r.Hi == math.MaxInt64:
		return strconv.FormatInt(r.Lo, 10) + "-"
	}
	return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
}

// OffsetRanges resolves offset ranges against t (the file at path): the
// records whose offsets they name, as record ranges in the order given. An
// offset (or a range) that names no record is an error saying which
// offsets the file holds; a format without offsets is a [UsageError].
func OffsetRanges(t *index.Table, path string, specs []SeqRange) ([]Range, error) {
	if !t.HasSeq() {
		return nil, Usagef("--offset: %s is a %v file, whose records have no offsets (Kafka segments' do); select records by number", path, t.Format())
	}
	var out []Range
	for _, r := range specs {
		found := false
		t.SeqRecords(r.Lo, r.Hi, func(n int64) bool {
			found = true
			if k := len(out) - 1; k >= 0 && out[k].Hi == n {
				out[k].Hi++
			} else {
				out = append(out, Range{Lo: n, Hi: n + 1})
			}
			return true
		})
		if !found {
			return nil, fmt.Errorf("no record at %s %s in %s (%s)", seqWord(t), r, path, seqSpan(t))
		}
	}
	return out, nil
}

// Select resolves a selection by record number (sel) or by offset (offs)
// in t, the file at path.
func Select(t *index.Table, path string, sel []Range, offs []SeqRange) ([]Range, error) {
	if len(offs) > 0 {
		return OffsetRanges(t, path, offs)
	}
	return Resolve(sel, t.Len())
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

// RecordNumber formats n the way a mount names record files in a
// directory of count records.
func RecordNumber(n, count int64) string {
	w := max(6, len(strconv.FormatInt(max(count-1, 0), 10)))
	return fmt.Sprintf("%0*d", w, n)
}
