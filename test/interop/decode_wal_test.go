package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/tombstones"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcddecode"
	"github.com/recfs/recfs/codec/promdecode"
	"github.com/recfs/recfs/test/internal/engines"
)

// jsonLines renders records with dec as JSON Lines, learning as a session
// does, and returns the objects of each record.
func jsonLines(t testing.TB, dec decode.Decoder, recs [][]byte) [][]map[string]any {
	t.Helper()
	out := make([][]map[string]any, len(recs))
	for i, r := range recs {
		w := decode.NewWriter(nil, decode.Output{JSON: true}, int64(i))
		rec := &decode.Record{N: int64(i), Payload: r}
		if err := dec.Decode(w, rec); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if l, ok := dec.(decode.Learner); ok {
			l.Learn(rec)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(w.B, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var m map[string]any
			d := json.NewDecoder(bytes.NewReader(line))
			d.UseNumber()
			if err := d.Decode(&m); err != nil {
				t.Fatalf("record %d: %q: %v", i, line, err)
			}
			out[i] = append(out[i], m)
		}
	}
	return out
}

// num reads a JSON number or non-finite string as a float.
func num(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case string:
		switch x {
		case "NaN", "stale-NaN":
			return math.NaN()
		case "+Inf":
			return math.Inf(1)
		case "-Inf":
			return math.Inf(-1)
		}
	}
	return math.Inf(-1) // no number: matches no finite value
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// labelMap turns a JSON labels object into labels.
func labelMap(v any) labels.Labels {
	m, _ := v.(map[string]any)
	b := labels.NewScratchBuilder(len(m))
	for k, x := range m {
		s, _ := x.(string)
		b.Add(k, s)
	}
	b.Sort()
	return b.Labels()
}

// promCheck compares the lines recfs rendered for rec with what
// Prometheus's record.Decoder reads from it, field by field; known holds
// the labels of the series seen before.
func promCheck(t *testing.T, i int, rec []byte, lines []map[string]any, known map[uint64]labels.Labels) {
	t.Helper()
	var dec record.Decoder
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("record %d (%v): %s\nlines: %v", i, dec.Type(rec), fmt.Sprintf(format, args...), lines)
	}
	ref := func(l map[string]any) uint64 {
		v, _ := strconv.ParseUint(string(l["ref"].(json.Number)), 10, 64)
		return v
	}
	ms := func(l map[string]any, k string) int64 { v, _ := l[k+"_ms"].(json.Number).Int64(); return v }
	checkLabels := func(l map[string]any, r uint64) {
		t.Helper()
		want, ok := known[r]
		if got, has := l["labels"]; has != ok || ok && !labels.Equal(labelMap(got), want) {
			fail("series %d: labels %v, want %v (known %v)", r, got, want, ok)
		}
	}
	switch dec.Type(rec) {
	case record.Series:
		ss, err := dec.Series(rec, nil)
		if err != nil || len(ss) != len(lines) {
			fail("%d series, %v", len(ss), err)
		}
		for k, s := range ss {
			if ref(lines[k]) != uint64(s.Ref) || !labels.Equal(labelMap(lines[k]["labels"]), s.Labels) {
				fail("series %d: %v", k, s)
			}
			if _, ok := known[uint64(s.Ref)]; !ok {
				known[uint64(s.Ref)] = s.Labels.Copy()
			}
		}
	case record.Samples, record.SamplesV2:
		ss, err := dec.Samples(rec, nil)
		if err != nil || len(ss) != len(lines) {
			fail("%d samples, %v", len(ss), err)
		}
		for k, s := range ss {
			l := lines[k]
			st := int64(0)
			if _, ok := l["st_ms"]; ok {
				st = ms(l, "st")
			}
			if ref(l) != uint64(s.Ref) || ms(l, "t") != s.T || st != s.ST || !sameFloat(num(l["value"]), s.V) {
				fail("sample %d: %+v", k, s)
			}
			if (math.Float64bits(s.V) == 0x7ff0000000000002) != (l["value"] == "stale-NaN") {
				fail("sample %d: stale marker %v", k, l["value"])
			}
			checkLabels(l, uint64(s.Ref))
		}
	case record.Tombstones:
		ts, err := dec.Tombstones(rec, nil)
		if err != nil || len(ts) != len(lines) {
			fail("%d tombstones, %v", len(ts), err)
		}
		for k, s := range ts {
			if ref(lines[k]) != uint64(s.Ref) || ms(lines[k], "mint") != s.Intervals[0].Mint || ms(lines[k], "maxt") != s.Intervals[0].Maxt {
				fail("tombstone %d: %+v", k, s)
			}
		}
	case record.Exemplars:
		es, err := dec.Exemplars(rec, nil)
		if err != nil || len(es) != len(lines) {
			fail("%d exemplars, %v", len(es), err)
		}
		for k, e := range es {
			l := lines[k]
			if ref(l) != uint64(e.Ref) || ms(l, "t") != e.T || !sameFloat(num(l["value"]), e.V) || !labels.Equal(labelMap(l["exemplar_labels"]), e.Labels) {
				fail("exemplar %d: %+v", k, e)
			}
			checkLabels(l, uint64(e.Ref))
		}
	case record.Metadata:
		ms, err := dec.Metadata(rec, nil)
		if err != nil || len(ms) != len(lines) {
			fail("%d metadata, %v", len(ms), err)
		}
		for k, m := range ms {
			l := lines[k]
			if ref(l) != uint64(m.Ref) || l["metric_type"] != string(record.ToMetricType(m.Type)) && !(m.Type == 0 && l["metric_type"] == "unknown") ||
				l["field_unit"] != m.Unit || l["field_help"] != m.Help {
				fail("metadata %d: %+v", k, m)
			}
		}
	case record.MmapMarkers:
		mm, err := dec.MmapMarkers(rec, nil)
		if err != nil || len(mm) != len(lines) {
			fail("%d markers, %v", len(mm), err)
		}
		for k, m := range mm {
			f, _ := lines[k]["file"].(json.Number).Int64()
			o, _ := lines[k]["offset"].(json.Number).Int64()
			if ref(lines[k]) != uint64(m.Ref) || uint64(f)<<32|uint64(o) != uint64(m.MmapRef) {
				fail("marker %d: %+v", k, m)
			}
		}
	case record.HistogramSamples, record.CustomBucketsHistogramSamples, record.HistogramSamplesV2:
		hs, err := dec.HistogramSamples(rec, nil)
		if err != nil || len(hs) != len(lines) {
			fail("%d histograms, %v", len(hs), err)
		}
		for k, h := range hs {
			checkHistogram(t, lines[k], h.H.ToFloat(nil), fail)
			if ref(lines[k]) != uint64(h.Ref) || ms(lines[k], "t") != h.T {
				fail("histogram %d: %+v", k, h)
			}
		}
	case record.FloatHistogramSamples, record.CustomBucketsFloatHistogramSamples, record.FloatHistogramSamplesV2:
		hs, err := dec.FloatHistogramSamples(rec, nil)
		if err != nil || len(hs) != len(lines) {
			fail("%d histograms, %v", len(hs), err)
		}
		for k, h := range hs {
			checkHistogram(t, lines[k], h.FH, fail)
			if ref(lines[k]) != uint64(h.Ref) || ms(lines[k], "t") != h.T {
				fail("histogram %d: %+v", k, h)
			}
		}
	case record.MinValidTime:
		m, err := dec.MinValidTime(rec)
		if err != nil || len(lines) != 1 || ms(lines[0], "t") != m {
			fail("min valid time %d, %v", m, err)
		}
	default:
		if len(lines) != 1 || lines[0]["type"] != "unknown" {
			fail("an unknown record is not shown whole")
		}
	}
}

// checkHistogram compares a histogram line with h (integer histograms
// compared as their float form: recfs shows their bucket deltas, which
// checkHistogram sums).
func checkHistogram(t *testing.T, l map[string]any, h *histogram.FloatHistogram, fail func(string, ...any)) {
	t.Helper()
	schema, _ := l["schema"].(json.Number).Int64()
	if int32(schema) != h.Schema || !sameFloat(num(l["count"]), h.Count) || !sameFloat(num(l["sum"]), h.Sum) ||
		!sameFloat(num(l["zero_count"]), h.ZeroCount) || !sameFloat(num(l["zero_threshold"]), h.ZeroThreshold) {
		fail("histogram fields %+v", h)
	}
	buckets := func(key string, want []float64) {
		got, _ := l[key].([]any)
		if len(got) != len(want) {
			fail("%s: %v, want %v", key, got, want)
		}
		sum := 0.0
		for i, g := range got {
			v := num(g)
			if l["type"] == "histogram" {
				sum += v
				v = sum
			}
			if !sameFloat(v, want[i]) {
				fail("%s[%d]: %v, want %v", key, i, v, want[i])
			}
		}
	}
	buckets("pos_buckets", h.PositiveBuckets)
	buckets("neg_buckets", h.NegativeBuckets)
	if h.UsesCustomBuckets() {
		got, _ := l["custom_values"].([]any)
		if len(got) != len(h.CustomValues) {
			fail("custom values %v, want %v", got, h.CustomValues)
		}
	}
}

// TestPrometheusDecodeAgrees: --decode prometheus shows, field by field,
// what Prometheus's record.Decoder reads from records of every type its
// Encoder writes (and from a real Prometheus's WAL), samples with the
// labels of the series recorded before them.
func TestPrometheusDecodeAgrees(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, recs [][]byte) {
		lines := jsonLines(t, promdecode.New(decode.Env{}), recs)
		known := map[uint64]labels.Labels{}
		for i, r := range recs {
			promCheck(t, i, r, lines[i], known)
		}
	}
	t.Run("encoder", func(t *testing.T) {
		t.Parallel()
		recs := promRecords(50, false)
		recs = append(recs, promRecords(20, true)...)
		recs = append(recs, (&record.Encoder{}).Tombstones([]tombstones.Stone{{Ref: 1, Intervals: tombstones.Intervals{{Mint: math.MinInt64, Maxt: math.MaxInt64}}}}, nil))
		check(t, recs)
	})
	t.Run("real", func(t *testing.T) {
		t.Parallel()
		wal := engines.RunPrometheus(t, true)
		var recs [][]byte
		for _, seg := range segments(t, wal) {
			r, err := promRefSegment(t, seg)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r...)
		}
		check(t, recs)
	})
}

// TestEtcdDecodeAgrees: --decode etcd shows, field by field, what etcd's
// own types read from every record of a real etcd's WAL: entries' terms,
// indexes and requests (puts, deletes, txns, leases, auth, compaction),
// hard states, metadata and snapshots.
func TestEtcdDecodeAgrees(t *testing.T) {
	t.Parallel()
	e := engines.StartEtcd(t)
	etcdWorkload(t, e)
	e.Stop(t)
	seen := map[string]int{}
	for _, f := range walFiles(t, e.WALDir()) {
		recs, err := etcdRefFile(t, f)
		if err != nil {
			t.Fatal(err)
		}
		lines := jsonLines(t, etcddecode.New(), recs)
		for i, b := range recs {
			var rec walpb.Record
			if err := rec.Unmarshal(b); err != nil {
				t.Fatal(err)
			}
			etcdCheck(t, rec, lines[i], seen)
		}
	}
	for _, op := range []string{"put", "delete-range", "txn compare", "txn success put", "lease-grant", "lease-revoke", "compaction", "user-add", "role-add", "state", "metadata", "snapshot"} {
		if seen[op] == 0 {
			t.Errorf("no %q line among %v", op, seen)
		}
	}
}

// etcdCheck compares the lines of one record with etcd's types.
func etcdCheck(t *testing.T, rec walpb.Record, lines []map[string]any, seen map[string]int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nlines: %v", fmt.Sprintf(format, args...), lines)
	}
	u := func(v any) uint64 { n, _ := strconv.ParseUint(string(v.(json.Number)), 10, 64); return n }
	hex := func(v any) uint64 { n, _ := strconv.ParseUint(v.(string), 16, 64); return n }
	switch rec.Type {
	case wal.StateType:
		st := wal.MustUnmarshalState(rec.Data)
		seen["state"]++
		if len(lines) != 1 || u(lines[0]["term"]) != st.Term || u(lines[0]["commit"]) != st.Commit || hex(lines[0]["vote"]) != st.Vote {
			fail("state %+v", st)
		}
	case wal.MetadataType:
		var m etcdserverpb.Metadata
		if err := m.Unmarshal(rec.Data); err != nil {
			t.Fatalf("metadata record: %v", err)
		}
		seen["metadata"]++
		if len(lines) != 1 || hex(lines[0]["node"]) != m.NodeID || hex(lines[0]["cluster"]) != m.ClusterID {
			fail("metadata %+v", m)
		}
	case wal.SnapshotType:
		var s walpb.Snapshot
		if err := s.Unmarshal(rec.Data); err != nil {
			t.Fatalf("snapshot record: %v", err)
		}
		seen["snapshot"]++
		if len(lines) != 1 || u(lines[0]["index"]) != s.Index || u(lines[0]["term"]) != s.Term {
			fail("snapshot %+v", s)
		}
	case wal.EntryType:
		ent := wal.MustUnmarshalEntry(rec.Data)
		for _, l := range lines {
			if u(l["term"]) != ent.Term || u(l["index"]) != ent.Index {
				fail("entry %d/%d", ent.Term, ent.Index)
			}
			seen[l["op"].(string)]++
		}
		if ent.Type != raftpb.EntryNormal || len(ent.Data) == 0 {
			return
		}
		var r etcdserverpb.InternalRaftRequest
		if err := r.Unmarshal(ent.Data); err != nil {
			return // a v2 request
		}
		op := lines[0]["op"]
		switch {
		case r.Put != nil:
			if op != "put" || lines[0]["key"] != string(r.Put.Key) || lines[0]["value"] != string(r.Put.Value) ||
				r.Put.Lease != 0 && hex(lines[0]["lease"]) != uint64(r.Put.Lease) {
				fail("put %+v", r.Put)
			}
		case r.DeleteRange != nil:
			if op != "delete-range" || lines[0]["key"] != string(r.DeleteRange.Key) || len(r.DeleteRange.RangeEnd) > 0 && lines[0]["range_end"] != string(r.DeleteRange.RangeEnd) {
				fail("delete %+v", r.DeleteRange)
			}
		case r.Txn != nil:
			if len(lines) != len(r.Txn.Compare)+len(r.Txn.Success)+len(r.Txn.Failure) || lines[0]["key"] != string(r.Txn.Compare[0].Key) {
				fail("txn %+v", r.Txn)
			}
		case r.LeaseGrant != nil:
			if op != "lease-grant" || hex(lines[0]["id"]) != uint64(r.LeaseGrant.ID) || u(lines[0]["ttl"]) != uint64(r.LeaseGrant.TTL) {
				fail("lease grant %+v", r.LeaseGrant)
			}
		case r.LeaseRevoke != nil:
			if op != "lease-revoke" || hex(lines[0]["id"]) != uint64(r.LeaseRevoke.ID) {
				fail("lease revoke %+v", r.LeaseRevoke)
			}
		case r.Compaction != nil:
			if op != "compaction" || u(lines[0]["revision"]) != uint64(r.Compaction.Revision) {
				fail("compaction %+v", r.Compaction)
			}
		case r.AuthUserAdd != nil:
			if op != "user-add" || lines[0]["name"] != r.AuthUserAdd.Name || strings.Contains(fmt.Sprint(lines), "secret") {
				fail("user add %+v (a password must not show)", r.AuthUserAdd.Name)
			}
		case r.AuthRoleAdd != nil:
			if op != "role-add" || lines[0]["name"] != string(r.AuthRoleAdd.Name) {
				fail("role add %+v", r.AuthRoleAdd)
			}
		}
	}
}
