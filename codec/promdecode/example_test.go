package promdecode_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/promdecode"
)

// Render a series record, then a samples record: the samples carry the
// labels the series record gave their ref.
func Example() {
	series := []byte{1}                                // type: series
	series = binary.BigEndian.AppendUint64(series, 12) // ref
	series = append(series, 2)                         // 2 labels
	series = append(series, 8, '_', '_', 'n', 'a', 'm', 'e', '_', '_', 2, 'u', 'p')
	series = append(series, 3, 'j', 'o', 'b', 4, 'n', 'o', 'd', 'e')
	samples := []byte{2}                                 // type: samples
	samples = binary.BigEndian.AppendUint64(samples, 12) // base ref
	samples = binary.BigEndian.AppendUint64(samples, 1_700_000_000_000)
	samples = append(samples, 0, 0) // ref and time deltas
	samples = binary.BigEndian.AppendUint64(samples, math.Float64bits(1))

	d := promdecode.New(decode.Env{})
	for n, p := range [][]byte{series, samples} {
		rec := &decode.Record{N: int64(n), Payload: p}
		w := decode.NewWriter(nil, decode.Output{}, rec.N)
		d.Decode(w, rec)
		d.Learn(rec)
		fmt.Print(string(w.B))
	}
	// Output:
	// series 12 up{job="node"}
	// sample 12 2023-11-14T22:13:20.000Z 1 up{job="node"}
}
