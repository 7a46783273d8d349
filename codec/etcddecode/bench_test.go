package etcddecode

import (
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

// BenchmarkDecodePut: a put entry of a Kubernetes-sized value, per
// record byte.
func BenchmarkDecodePut(b *testing.B) {
	v := make([]byte, 2000)
	for i := range v {
		v[i] = byte('a' + i%26)
	}
	p := ent(2, 5, msg(100, msg(2, "root"), 4, msg(1, "/registry/configmaps/default/settings", 2, v, 3, uint64(0x694d))))
	rec := &decode.Record{Payload: p}
	b.SetBytes(int64(len(p)))
	var buf []byte
	for b.Loop() {
		w := decode.NewWriter(buf[:0], decode.Output{}, 0)
		if err := Decode(w, rec); err != nil {
			b.Fatal(err)
		}
		buf = w.B
	}
}
