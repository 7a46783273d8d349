package codectest

import (
	"bytes"
	"testing"
)

// SamePayloads fails t unless got holds the payloads of want, in order:
// it names what (a test case; "" for none), the counts when they differ,
// or the first record that differs.
func SamePayloads(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	if what != "" {
		what += ": "
	}
	if len(got) != len(want) {
		t.Fatalf("%s%d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%srecord %d differs (%d bytes, want %d)", what, i, len(got[i]), len(want[i]))
		}
	}
}

// Scanner is what ScanAll drives: a format's scanner of records of type R
// whose damage ranges are of type D (codec.Damage; codectest does not
// import codec).
type Scanner[R, D any] interface {
	Next() bool
	Record() R
	Damage() []D
	Err() error
}

// ScanAll drives sc to its end and returns each record's payload, read
// by read, the records, the scan's damage and its error. read may change
// the record it is given (say, to copy a fragment list the scanner
// reuses): the record kept is the one read leaves. An error from read
// fails t, naming the record's number and the record.
func ScanAll[R, D any](t testing.TB, sc Scanner[R, D], read func(rec *R) ([]byte, error)) ([][]byte, []R, []D, error) {
	t.Helper()
	var got [][]byte
	var recs []R
	for sc.Next() {
		rec := sc.Record()
		p, err := read(&rec)
		if err != nil {
			t.Fatalf("record %d (%+v): %v", len(recs), rec, err)
		}
		got = append(got, p)
		recs = append(recs, rec)
	}
	return got, recs, sc.Damage(), sc.Err()
}
