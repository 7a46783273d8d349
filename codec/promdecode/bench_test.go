package promdecode

import (
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

// BenchmarkDecodeSamples: a scrape's samples record of 1000 series with
// known labels, per record byte.
func BenchmarkDecodeSamples(b *testing.B) {
	d := New(decode.Env{})
	s := rec(typeSeries)
	for i := range 1000 {
		s.be(uint64(i)).labels("__name__", "http_requests_total", "code", "200", "instance", "10.0.0.1:9090", "path", "/api/v1/query")
	}
	d.Learn(&decode.Record{N: 0, Payload: s.b})
	smp := rec(typeSamples).be(0).be(t0)
	for i := range 1000 {
		smp.v(int64(i)).v(int64(i % 7)).f(float64(i) * 1.5)
	}
	r := &decode.Record{N: 1, Payload: smp.b}
	b.SetBytes(int64(len(smp.b)))
	var buf []byte
	for b.Loop() {
		w := decode.NewWriter(buf[:0], decode.Output{}, 1)
		if err := d.Decode(w, r); err != nil {
			b.Fatal(err)
		}
		buf = w.B
	}
}
