package interop

import (
	"fmt"
	"math"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/tombstones"
)

// promRecords returns records of every type of Prometheus's tsdb/record
// package, encoded by its own Encoder (V1 encodings, and with st the V2
// ones carrying start times), with n series of samples each.
func promRecords(n int, st bool) [][]byte {
	enc := record.Encoder{EnableSTStorage: st}
	var out [][]byte
	var series []record.RefSeries
	for i := range n {
		series = append(series, record.RefSeries{Ref: chunks.HeadSeriesRef(i + 1), Labels: labels.FromStrings(
			"__name__", "http_requests_total", "code", fmt.Sprint(200+100*(i%4)), "instance", "127.0.0.1:9090",
			"path", fmt.Sprintf("/api/v%d", i), "note", "a \"quoted\"\\value\nwith a newline")})
	}
	out = append(out, enc.Series(series, nil))
	var samples []record.RefSample
	for i := range n {
		v := float64(i) * 1.5
		switch i % 5 {
		case 1:
			v = math.NaN()
		case 2:
			v = math.Inf(-1)
		case 3:
			v = math.Float64frombits(0x7ff0000000000002) // a stale marker's kind of NaN
		}
		s := record.RefSample{Ref: chunks.HeadSeriesRef(i + 1), T: 1_700_000_000_000 + int64(i)*15, V: v}
		if st && i%2 == 0 {
			s.ST = 1_699_999_000_000
		}
		samples = append(samples, s)
	}
	out = append(out, enc.Samples(samples, nil))
	out = append(out, enc.Tombstones([]tombstones.Stone{{Ref: 2, Intervals: tombstones.Intervals{{Mint: -5, Maxt: 1_700_000_000_000}, {Mint: 7, Maxt: 9}}}}, nil))
	out = append(out, enc.Exemplars([]record.RefExemplar{
		{Ref: 1, T: 1_700_000_000_001, V: 0.25, Labels: labels.FromStrings("trace_id", "abc123")},
		{Ref: 3, T: 1_700_000_000_002, V: -1, Labels: labels.EmptyLabels()},
	}, nil))
	out = append(out, enc.Metadata([]record.RefMetadata{
		{Ref: 1, Type: uint8(record.Counter), Unit: "requests", Help: "Requests served."},
		{Ref: 2, Type: uint8(record.GaugeHistogram), Unit: "", Help: ""},
	}, nil))
	out = append(out, enc.MmapMarkers([]record.RefMmapMarker{{Ref: 1, MmapRef: 0x100000020}, {Ref: 9, MmapRef: 7}}, nil))
	h := &histogram.Histogram{CounterResetHint: histogram.NotCounterReset, Schema: 1, ZeroThreshold: 0.001, ZeroCount: 2, Count: 10, Sum: 18.5,
		PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}, {Offset: 1, Length: 1}}, PositiveBuckets: []int64{1, 2, -1},
		NegativeSpans: []histogram.Span{{Offset: -2, Length: 1}}, NegativeBuckets: []int64{3}}
	fh := h.ToFloat(nil)
	ch := &histogram.Histogram{Schema: histogram.CustomBucketsSchema, Count: 3, Sum: 4,
		PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{1, 1}, CustomValues: []float64{0.5, 1}}
	hs := []record.RefHistogramSample{{Ref: 1, T: 1_700_000_000_100, H: h}, {Ref: 2, T: 1_700_000_000_130, H: h}}
	b, _ := enc.HistogramSamples(hs, nil)
	out = append(out, b)
	fhs := []record.RefFloatHistogramSample{{Ref: 4, T: 1_700_000_000_200, FH: fh}}
	b, _ = enc.FloatHistogramSamples(fhs, nil)
	out = append(out, b)
	out = append(out, enc.CustomBucketsHistogramSamples([]record.RefHistogramSample{{Ref: 5, T: 1_700_000_000_300, H: ch}}, nil))
	out = append(out, enc.CustomBucketsFloatHistogramSamples([]record.RefFloatHistogramSample{{Ref: 5, T: 1_700_000_000_301, FH: ch.ToFloat(nil)}}, nil))
	out = append(out, enc.MinValidTime(1_699_000_000_000, nil))
	out = append(out, []byte{200, 1, 2, 3}) // a type no version of Prometheus writes
	return out
}
