package promdecode

import "github.com/recfs/recfs/codec/decode"

// Prepare is the registry's constructor of prometheus decoders: one per
// source, sharing the series of a directory's segments (see New).
func Prepare(*decode.Params) (decode.Factory, error) {
	return func(env decode.Env) (decode.Decoder, error) { return New(env), nil }, nil
}

// Detect reports whether recs, the first records of a source, are
// Prometheus WAL records: each is of a type Prometheus writes and renders
// without error, and one holds an item.
func Detect(recs [][]byte) bool {
	d := &Decoder{own: newSeriesTable(0)}
	items := false
	for i, r := range recs {
		if len(r) == 0 || r[0] < typeSeries || r[0] > typeMinValidTime {
			return false
		}
		w := decode.NewWriter(nil, decode.Output{}, int64(i))
		if err := d.render(w, r, int64(i)); err != nil {
			return false
		}
		items = items || len(w.B) > 0
	}
	return items
}
