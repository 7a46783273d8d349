package promdecode

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

const t0 = 1_700_000_000_000 // 2023-11-14T22:13:20.000Z

// TestRender: each record type renders as the package documentation says,
// samples with the labels of a series recorded before them.
func TestRender(t *testing.T) {
	t.Parallel()
	series := rec(typeSeries).be(7).labels("__name__", "http_requests_total", "code", "500", "path", "/a \"b\"\\\n").
		be(8).labels("le", "0.5", "weird name", "x").b
	for _, tc := range []struct {
		name string
		rec  []byte
		want string
	}{
		{"series", series, "series 7 http_requests_total{code=\"500\", path=\"/a \\\"b\\\"\\\\\\n\"}\nseries 8 {le=\"0.5\", \"weird name\"=\"x\"}\n"},
		{"samples", rec(typeSamples).be(7).be(t0).v(0).v(0).f(1.5).v(1).v(15).f(math.Inf(1)).v(-6).v(30).f(math.Float64frombits(staleNaN)).b,
			"sample 7 2023-11-14T22:13:20.000Z 1.5 http_requests_total{code=\"500\", path=\"/a \\\"b\\\"\\\\\\n\"}\n" +
				"sample 8 2023-11-14T22:13:20.015Z +Inf {le=\"0.5\", \"weird name\"=\"x\"}\nsample 1 2023-11-14T22:13:20.030Z stale-NaN\n"},
		{"samples v2", rec(typeSamplesV2).v(8).v(t0).v(t0 - 1000).f(2).v(-1).v(5).byte1(stSame).f(3).v(0).v(6).byte1(stNone).f(4).b,
			"sample 8 2023-11-14T22:13:20.000Z 2 st=2023-11-14T22:13:19.000Z {le=\"0.5\", \"weird name\"=\"x\"}\n" +
				"sample 7 2023-11-14T22:13:20.005Z 3 st=2023-11-14T22:13:19.000Z http_requests_total{code=\"500\", path=\"/a \\\"b\\\"\\\\\\n\"}\n" +
				"sample 7 2023-11-14T22:13:20.006Z 4 http_requests_total{code=\"500\", path=\"/a \\\"b\\\"\\\\\\n\"}\n"},
		{"tombstones", rec(typeTombstones).be(9).v(math.MinInt64).v(t0).b,
			"tombstone 9 -9223372036854775808 2023-11-14T22:13:20.000Z\n"},
		{"exemplars", rec(typeExemplars).be(8).be(t0).v(0).v(1).f(0.25).labels("trace_id", "abc").b,
			"exemplar 8 2023-11-14T22:13:20.001Z 0.25 {trace_id=\"abc\"} {le=\"0.5\", \"weird name\"=\"x\"}\n"},
		{"metadata", rec(typeMetadata).uv(9).byte1(1).uv(2).str("UNIT").str("s").str("HELP").str("Time \"spent\".").b,
			"metadata 9 counter unit=\"s\" help=\"Time \\\"spent\\\".\"\n"},
		{"mmap markers", rec(typeMmapMarkers).be(9).be(3<<32 | 40).b, "mmap-marker 9 file=3 offset=40\n"},
		{"histogram", rec(typeHistogramSamples).be(8).be(t0).v(0).v(0).
			byte1(2).v(1).f(0.001).uv(2).uv(10).f(18.5).uv(2).v(0).uv(2).v(1).uv(1).uv(1).v(-2).uv(1).uv(3).v(1).v(2).v(-1).uv(1).v(3).b,
			"histogram 8 2023-11-14T22:13:20.000Z schema=1 count=10 sum=18.5 zero_threshold=0.001 zero_count=2 counter_reset=not_reset pos_spans=0:2,1:1 neg_spans=-2:1 pos_buckets=1,2,-1 neg_buckets=3 {le=\"0.5\", \"weird name\"=\"x\"}\n"},
		{"custom float histogram", rec(typeCustomBucketsFloatHistograms).be(9).be(t0).v(0).v(0).
			byte1(0).v(customBucketsSchema).f(0).f(0).f(3).f(4).uv(1).v(0).uv(2).uv(0).uv(2).f(1).f(2).uv(0).uv(2).f(0.5).f(1).b,
			"float-histogram 9 2023-11-14T22:13:20.000Z schema=-53 count=3 sum=4 zero_threshold=0 zero_count=0 counter_reset=unknown pos_spans=0:2 neg_spans= pos_buckets=1,2 neg_buckets= custom_values=0.5,1\n"},
		{"min valid time", rec(typeMinValidTime).be(t0).b, "min-valid-time 2023-11-14T22:13:20.000Z\n"},
		{"unknown", []byte{200, 1, 2}, "unknown type=200 hex=c80102\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, New(decode.Env{}), decode.Output{}, series, tc.rec)
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, tc.want)
			}
			js, err := render(t, New(decode.Env{}), decode.Output{JSON: true}, series, tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSuffix(js, "\n"), "\n") {
				var v map[string]any
				if err := json.Unmarshal([]byte(line), &v); err != nil || v["n"] != 1.0 {
					t.Fatalf("JSON line %q: %v", line, err)
				}
			}
		})
	}
}

// TestOnlyEarlierSeries: a sample renders with the labels of a series
// recorded before it only, so its text does not depend on what was read
// before it.
func TestOnlyEarlierSeries(t *testing.T) {
	t.Parallel()
	samples := rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).b
	series := rec(typeSeries).be(1).labels("__name__", "up").b
	d := New(decode.Env{})
	got, _ := render(t, d, decode.Output{}, samples, series)
	if !strings.HasPrefix(got, "series 1 up{}") {
		t.Fatalf("series: %q", got)
	}
	w := decode.NewWriter(nil, decode.Output{}, 0)
	d.Decode(w, &decode.Record{N: 0, Payload: samples})
	if string(w.B) != "sample 1 2023-11-14T22:13:20.000Z 1\n" {
		t.Fatalf("a sample before its series, rendered after learning it: %q", w.B)
	}
}

// TestBudget: past the state budget series are not kept, and their
// samples say so, the same way whatever was read first.
func TestBudget(t *testing.T) {
	t.Parallel()
	s1 := rec(typeSeries).be(1).labels("__name__", "a").b
	s2 := rec(typeSeries).be(2).labels("__name__", strings.Repeat("b", 200)).b
	smp := rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).v(1).v(0).f(2).b
	d := New(decode.Env{Budget: 2 * (entryOverhead + 20)})
	got, err := render(t, d, decode.Output{}, s1, s2, smp)
	want := "sample 1 2023-11-14T22:13:20.000Z 1 a{}\nsample 2 2023-11-14T22:13:20.000Z 2 labels=budget\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// TestSegments: a segment's samples show the series of the lower-numbered
// segments of its directory, never of higher-numbered ones.
func TestSegments(t *testing.T) {
	t.Parallel()
	dir := memDir{
		"00000000":  {rec(typeSeries).be(1).labels("__name__", "first").b},
		"00000001":  {rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).v(1).v(0).f(2).b},
		"00000002":  {rec(typeSeries).be(2).labels("__name__", "later").b},
		"notes.txt": nil,
	}
	got, err := render(t, New(sharedEnv(dir)("00000001")), decode.Output{}, dir["00000001"]...)
	want := "sample 1 2023-11-14T22:13:20.000Z 1 first{}\nsample 2 2023-11-14T22:13:20.000Z 2\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// TestCheckpoint: the segments after the newest checkpoint directory show
// the labels of the series it holds (those of deleted segments); the
// segments it covers, an older checkpoint and a temporary one do not
// count.
func TestCheckpoint(t *testing.T) {
	t.Parallel()
	samples := rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).v(2).v(0).f(2).b
	dir := memTree{
		memDir: memDir{
			"00000002": {samples},
			"00000003": {samples},
			"00000004": {rec(typeSeries).be(5).labels("__name__", "later").b, samples},
		},
		subs: map[string]memDir{
			"checkpoint.00000001": {"00000000": {rec(typeSeries).be(3).labels("__name__", "old").b}},
			"checkpoint.00000002": {
				"00000000": {rec(typeSeries).be(1).labels("__name__", "kept", "job", "a").b},
				"00000001": {rec(typeSeries).be(3).labels("__name__", "new").b},
			},
			"checkpoint.00000003.tmp": {"00000000": {rec(typeSeries).be(1).labels("__name__", "tmp").b}},
		},
	}
	env := sharedEnv(dir)
	for _, tc := range []struct{ seg, want string }{
		{"00000003", "sample 1 2023-11-14T22:13:20.000Z 1 kept{job=\"a\"}\nsample 3 2023-11-14T22:13:20.000Z 2 new{}\n"},
		{"00000002", "sample 1 2023-11-14T22:13:20.000Z 1\nsample 3 2023-11-14T22:13:20.000Z 2\n"},
		{"00000004", "sample 1 2023-11-14T22:13:20.000Z 1 kept{job=\"a\"}\nsample 3 2023-11-14T22:13:20.000Z 2 new{}\n"},
	} {
		got, err := render(t, New(env(tc.seg)), decode.Output{}, dir.memDir[tc.seg]...)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.seg, got, err, tc.want)
		}
	}
	// Without SubDirs, the checkpoint is not read.
	got, _ := render(t, New(sharedEnv(dir.memDir)("00000003")), decode.Output{}, samples)
	if strings.Contains(got, "kept") {
		t.Errorf("a checkpoint read without SubDirs: %q", got)
	}
}

// TestMisfit: a record that does not parse keeps the lines before the
// fault and fails as a misfit at the fault.
func TestMisfit(t *testing.T) {
	t.Parallel()
	for name, r := range map[string][]byte{
		"empty":            {},
		"cut sample":       rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).v(1).b,
		"count overrun":    rec(typeSeries).be(1).uv(1 << 40).b,
		"trailing":         append(rec(typeMinValidTime).be(t0).b, 0),
		"bad st marker":    rec(typeSamplesV2).v(1).v(t0).v(0).f(1).v(0).v(0).byte1(9).f(1).b,
		"string overrun":   rec(typeSeries).be(1).uv(1).uv(50).b,
		"histogram cut":    rec(typeHistogramSamples).be(1).be(t0).v(0).v(0).byte1(0).b,
		"tombstone varint": append(rec(typeTombstones).be(1).b, 0xff),
	} {
		out, err := render(t, New(decode.Env{}), decode.Output{}, r)
		var de *decode.Error
		if !errors.As(err, &de) || !errors.Is(err, decode.ErrMisfit) {
			t.Errorf("%s: %q, %v; want a misfit", name, out, err)
		}
		if name == "cut sample" && !strings.HasPrefix(out, "sample 1 ") {
			t.Errorf("%s: the sample before the fault is gone: %q", name, out)
		}
	}
}

// TestDetect: the first records of a WAL are recognised; other bytes are
// not.
func TestDetect(t *testing.T) {
	t.Parallel()
	wal := [][]byte{rec(typeSeries).be(1).labels("__name__", "up").b, rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).b}
	if !Detect(wal) {
		t.Fatal("WAL records not detected")
	}
	for _, recs := range [][][]byte{{{}}, {[]byte("hello")}, {{1, 2, 3}}, {rec(typeSamples).b}} {
		if Detect(recs) {
			t.Errorf("%q detected", recs)
		}
	}
}
