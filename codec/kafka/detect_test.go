package kafka

import (
	"bytes"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// TestProbe: segments of every message format are recognised by their
// first batch; other bytes, and a first batch that does not verify, are
// not.
func TestProbe(t *testing.T) {
	t.Parallel()
	v2 := v2Segment(t, []int{2, 3}, Zstd).file
	bad := bytes.Clone(v2)
	bad[70] ^= 1
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"v2", v2, true},
		{"v1", v1Set(t, 1, false).file, true},
		{"v0", codectest.KafkaMessage(0, 0, 0, 0, nil, []byte("x")), true},
		{"damaged-first", bad, false},
		{"torn-first", v2[:40], false},
		{"zeros", make([]byte, 4096), false},
		{"text", []byte("hello, this is not a kafka segment at all, no no no no no no no"), false},
		{"empty", nil, false},
	} {
		if got := Probe(bytes.NewReader(tc.b), int64(len(tc.b))); got != tc.want {
			t.Errorf("%s: Probe = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIsSegmentName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"00000000000000000000.log": true, "00000000000012345678.log": true,
		"0000000000000000000.log": false, "00000000000000000000.index": false, "0000000000000000000a.log": false,
		"00000000000000000000-abc.log": false, "events.log": false, ".log": false,
	} {
		if IsSegmentName(name) != want {
			t.Errorf("IsSegmentName(%q) = %v", name, !want)
		}
	}
}
