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
