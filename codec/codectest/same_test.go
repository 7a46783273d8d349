package codectest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the first failure instead of
// failing; Fatalf stops the helper by a panic that check recovers.
type recorder struct {
	testing.TB
	msg string
}

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, a ...any) {
	r.msg = fmt.Sprintf(format, a...)
	panic(fatal{})
}

// check runs f against a recorder and returns its failure ("" for none).
func check(f func(t testing.TB)) (msg string) {
	r := &recorder{}
	defer func() {
		if v := recover(); v != nil && v != (fatal{}) {
			panic(v)
		}
		msg = r.msg
	}()
	f(r)
	return ""
}

func TestSamePayloads(t *testing.T) {
	t.Parallel()
	a, b := []byte("a"), []byte("bb")
	for _, c := range []struct {
		got, want [][]byte
		fail      string // "": passes
	}{
		{[][]byte{a, b}, [][]byte{a, b}, ""},
		{nil, nil, ""},
		{[][]byte{a}, [][]byte{a, b}, "case: 1 records, want 2"},
		{[][]byte{a, a}, [][]byte{a, b}, "case: record 1 differs (1 bytes, want 2)"},
	} {
		msg := check(func(t testing.TB) { SamePayloads(t, "case", c.got, c.want) })
		if msg != c.fail || c.fail != "" && !strings.HasPrefix(msg, "case: ") {
			t.Errorf("SamePayloads(%q, %q) failed with %q, want %q", c.got, c.want, msg, c.fail)
		}
	}
}
