package dbdecode

import (
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

// TestDecodeAllocs: rendering a WriteBatch that decodes cleanly allocates
// nothing once the output buffer has grown (cat of a WAL renders 100k
// batches: an allocation per record was a tenth of its garbage).
func TestDecodeAllocs(t *testing.T) {
	batch := benchBatch(4)
	for _, c := range []struct {
		name string
		dec  decode.Decoder
		rec  []byte
	}{
		{"batch", NewBatch(Options{Dialect: DialectPebble}, nil), batch},
		{"batch-auto", NewBatch(Options{Dialect: DialectAuto}, nil), batch},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &decode.Record{Payload: c.rec}
			w := &decode.Writer{}
			if err := c.dec.Decode(w, r); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(w.B) == 0 {
				t.Fatal("decode wrote nothing")
			}
			got := testing.AllocsPerRun(100, func() {
				w.B = w.B[:0]
				if err := c.dec.Decode(w, r); err != nil {
					t.Fatal(err)
				}
			})
			if got != 0 {
				t.Errorf("%v allocations per record, want 0", got)
			}
		})
	}
}
