package promdecode

import (
	"strconv"

	"github.com/recfs/recfs/codec/decode"
)

// Decoder renders Prometheus WAL records (see the package documentation).
// It learns series labels from the records before the one it renders; it
// is a [decode.Learner], safe for concurrent Decode calls.
type Decoder struct {
	own *seriesTable // labels of this source's series records, by record number
	wal *walSeries   // labels of the lower-numbered segments beside it (nil: none)
	seg int64        // this source's segment number, when wal is set
}

// New returns the decoder of the source env describes: a segment whose
// name is its number, beside others in env.Dir, also shows the labels of
// series recorded in the lower-numbered segments (shared through
// env.Shared by the segments of one directory).
func New(env decode.Env) *Decoder {
	budget := env.StateBudget()
	d := &Decoder{own: newSeriesTable(budget / 2)}
	if seg, ok := segmentNumber(baseName(env.Path)); ok && env.Dir != nil {
		key := "promdecode.wal:" + dirName(env.Path)
		d.wal = env.Share(key, func() any { return newWALSeries(env.Dir, budget/2) }).(*walSeries)
		d.seg = seg
	}
	return d
}

// Learn keeps the labels of the series in rec (a series record).
func (d *Decoder) Learn(rec *decode.Record) error {
	learnSeries(d.own, rec.Payload, rec.N)
	return nil
}

// Reset forgets the labels learned from this source.
func (d *Decoder) Reset() { d.own.reset() }

// learnSeries adds the series of payload (if a series record) to t, as
// learned at at.
func learnSeries(t *seriesTable, payload []byte, at int64) {
	if len(payload) == 0 || payload[0] != typeSeries {
		return
	}
	c := cursor{b: payload, off: 1}
	for c.left() > 0 && c.err == nil {
		ref := c.be64()
		lbls := c.labels()
		if c.err == nil {
			t.add(ref, lbls, at)
		}
	}
}

// labels returns the labels of series ref as known before record n, and
// whether they are unknown because the state budget was reached.
func (d *Decoder) labels(ref uint64, n int64) (seriesEntry, bool, bool) {
	if e, ok, full := d.own.get(ref, n); ok {
		return e, true, false
	} else if d.wal == nil {
		return e, false, full
	} else if e, ok, wfull := d.wal.get(ref, d.seg); ok {
		return e, true, false
	} else {
		return e, false, full || wfull
	}
}

// Decode renders rec: one line per item of the record. A record that does
// not parse keeps the lines of the items before the fault and fails with
// a misfit at the fault.
func (d *Decoder) Decode(w *decode.Writer, rec *decode.Record) error {
	return d.render(w, rec.Payload, rec.N)
}

func (d *Decoder) render(w *decode.Writer, p []byte, n int64) error {
	if len(p) == 0 {
		return decode.Misfit(0, "empty record")
	}
	c := cursor{b: p, off: 1}
	r := renderer{d: d, w: w, n: n}
	if !r.items(p[0], &c) {
		r.unknown(p)
		return nil
	}
	if c.err == nil && c.left() > 0 {
		c.fail("bytes left after the last item")
	}
	return c.err
}

// items renders the items of a record of type typ, one handler per type;
// false means a type the decoder does not know. (A switch, not a table of
// functions: an indirect call would move r and c to the heap.)
func (r *renderer) items(typ byte, c *cursor) bool {
	switch typ {
	case typeSeries:
		r.seriesItems(c)
	case typeSamples:
		r.samplesV1(c)
	case typeSamplesV2:
		r.samplesV2(c)
	case typeTombstones:
		r.tombstones(c)
	case typeExemplars:
		r.exemplars(c)
	case typeMmapMarkers:
		r.mmapMarkers(c)
	case typeMetadata:
		r.metadata(c)
	case typeHistogramSamples, typeCustomBucketsHistograms:
		r.histogramsV1(c, false)
	case typeFloatHistogramSamples, typeCustomBucketsFloatHistograms:
		r.histogramsV1(c, true)
	case typeHistogramSamplesV2:
		r.histogramsV2(c, false)
	case typeFloatHistogramSamplesV2:
		r.histogramsV2(c, true)
	case typeMinValidTime:
		r.minValid(c)
	default:
		return false
	}
	return true
}

func (r *renderer) seriesItems(c *cursor) {
	for c.left() > 0 && c.err == nil {
		ref := c.be64()
		lbls := c.labels()
		if c.err == nil {
			r.series(ref, lbls)
		}
	}
}

func (r *renderer) tombstones(c *cursor) {
	for c.left() > 0 && c.err == nil {
		ref, mint, maxt := c.be64(), c.varint(), c.varint()
		if c.err == nil {
			r.tombstone(ref, mint, maxt)
		}
	}
}

func (r *renderer) mmapMarkers(c *cursor) {
	for c.left() > 0 && c.err == nil {
		ref, mref := c.be64(), c.be64()
		if c.err == nil {
			r.mmapMarker(ref, mref)
		}
	}
}

func (r *renderer) minValid(c *cursor) {
	mint := int64(c.be64())
	if c.err == nil && c.left() == 0 {
		r.minValidTime(mint)
	}
}

// renderer writes the lines of one record.
type renderer struct {
	d *Decoder
	w *decode.Writer
	n int64
	h histogram
}

// begin starts a line of the given kind about series ref.
func (r *renderer) begin(kind string, ref uint64) {
	r.w.Begin()
	if r.w.JSON() {
		r.w.Key("type")
		r.w.B = decode.AppendJSONString(r.w.B, kind)
		r.w.Key("ref")
		r.w.B = strconv.AppendUint(r.w.B, ref, 10)
		return
	}
	r.w.B = append(r.w.B, kind...)
	r.w.B = append(r.w.B, ' ')
	r.w.B = strconv.AppendUint(r.w.B, ref, 10)
}

// end writes series ref's labels, when known, and ends the line.
func (r *renderer) end(ref uint64) {
	e, ok, full := r.d.labels(ref, r.n)
	switch {
	case ok && r.w.JSON():
		r.w.Key("labels")
		r.w.B = appendJSONLabels(r.w.B, []byte(e.labels))
	case ok:
		r.w.B = append(r.w.B, ' ')
		r.w.B = append(r.w.B, e.text...)
	case full && r.w.JSON():
		r.w.Key("labels_past_budget")
		r.w.B = append(r.w.B, "true"...)
	case full:
		r.w.B = append(r.w.B, " labels=budget"...)
	}
	r.w.End()
}

// field writes " name=" (text) or the key name (JSON) before a value.
func (r *renderer) field(name string) {
	if r.w.JSON() {
		r.w.Key(name)
		return
	}
	r.w.B = append(r.w.B, ' ')
	r.w.B = append(r.w.B, name...)
	r.w.B = append(r.w.B, '=')
}

// time writes a timestamp field: positional in text, "KEY" and "KEY_ms"
// in JSON.
func (r *renderer) time(key string, ms int64) {
	if r.w.JSON() {
		appendJSONTime(r.w, key, ms)
		return
	}
	r.w.B = append(r.w.B, ' ')
	r.w.B = appendTime(r.w.B, ms)
}

// value writes a sample value: positional in text, "value" in JSON.
func (r *renderer) value(v float64) {
	if r.w.JSON() {
		r.w.Key("value")
		r.w.B = appendJSONValue(r.w.B, v)
		return
	}
	r.w.B = append(r.w.B, ' ')
	r.w.B = appendValue(r.w.B, v)
}

// labelSet writes a label set: positional in text, key in JSON.
func (r *renderer) labelSet(key string, lbls []byte) {
	if r.w.JSON() {
		r.w.Key(key)
		r.w.B = appendJSONLabels(r.w.B, lbls)
		return
	}
	r.w.B = append(r.w.B, ' ')
	r.w.B = appendLabels(r.w.B, lbls)
}

func (r *renderer) series(ref uint64, lbls []byte) {
	r.begin("series", ref)
	r.labelSet("labels", lbls)
	r.w.End()
}

func (r *renderer) sample(ref uint64, t, st int64, hasST bool, v float64) {
	r.begin("sample", ref)
	r.time("t", t)
	r.value(v)
	if hasST && st != 0 {
		r.startTime(st)
	}
	r.end(ref)
}

// startTime writes a sample's start time: st=… in text, "st" in JSON.
func (r *renderer) startTime(st int64) {
	if r.w.JSON() {
		appendJSONTime(r.w, "st", st)
		return
	}
	r.w.B = append(r.w.B, " st="...)
	r.w.B = appendTime(r.w.B, st)
}

func (r *renderer) samplesV1(c *cursor) {
	if c.left() == 0 {
		return
	}
	baseRef, baseT := c.be64(), int64(c.be64())
	for c.left() > 0 && c.err == nil {
		dref, dt, v := c.varint(), c.varint(), c.float()
		if c.err == nil {
			r.sample(uint64(int64(baseRef)+dref), baseT+dt, 0, false, v)
		}
	}
}

func (r *renderer) samplesV2(c *cursor) {
	var firstT, firstST, prevRef, prevST int64
	for i := 0; c.left() > 0 && c.err == nil; i++ {
		var ref, t, st int64
		if i == 0 {
			ref, t, st = c.varint(), c.varint(), c.varint()
			firstT, firstST = t, st
		} else {
			ref, t = prevRef+c.varint(), firstT+c.varint()
			st = readST(c, prevST, firstST)
		}
		v := c.float()
		if c.err == nil {
			r.sample(uint64(ref), t, st, true, v)
		}
		prevRef, prevST = ref, st
	}
}

// readST reads a V2 start-time marker (and value).
func readST(c *cursor, prev, first int64) int64 {
	switch m := c.byte(); m {
	case stNone:
		return 0
	case stSame:
		return prev
	case stExplicit:
		return first + c.varint()
	default:
		c.fail("unknown start-time marker " + strconv.Itoa(int(m)))
		return 0
	}
}

func (r *renderer) tombstone(ref uint64, mint, maxt int64) {
	r.begin("tombstone", ref)
	r.time("mint", mint)
	r.time("maxt", maxt)
	r.end(ref)
}

func (r *renderer) exemplars(c *cursor) {
	if c.left() == 0 {
		return
	}
	baseRef, baseT := c.be64(), int64(c.be64())
	for c.left() > 0 && c.err == nil {
		dref, dt, v := c.varint(), c.varint(), c.float()
		lbls := c.labels()
		if c.err != nil {
			return
		}
		ref := uint64(int64(baseRef) + dref)
		r.begin("exemplar", ref)
		r.time("t", baseT+dt)
		r.value(v)
		r.labelSet("exemplar_labels", lbls)
		r.end(ref)
	}
}

func (r *renderer) mmapMarker(ref, mref uint64) {
	r.begin("mmap-marker", ref)
	r.field("file")
	r.w.B = strconv.AppendUint(r.w.B, mref>>32, 10)
	r.field("offset")
	r.w.B = strconv.AppendUint(r.w.B, mref&(1<<32-1), 10)
	r.end(ref)
}

// metricTypes names the metric types of metadata records.
var metricTypes = []string{"unknown", "counter", "gauge", "histogram", "gaugehistogram", "summary", "info", "stateset"}

func (r *renderer) metadata(c *cursor) {
	for c.left() > 0 && c.err == nil {
		ref := c.uvarint()
		typ := c.byte()
		nf := c.count(2)
		start := c.off
		for range nf {
			c.str()
			c.str()
		}
		if c.err != nil {
			return
		}
		r.begin("metadata", ref)
		name := "type(" + strconv.Itoa(int(typ)) + ")"
		if int(typ) < len(metricTypes) {
			name = metricTypes[typ]
		}
		if r.w.JSON() {
			r.w.Key("metric_type")
			r.w.B = decode.AppendJSONString(r.w.B, name)
		} else {
			r.w.B = append(r.w.B, ' ')
			r.w.B = append(r.w.B, name...)
		}
		f := cursor{b: c.b[:c.off], off: start}
		for range nf {
			k, v := f.str(), f.str()
			key := string(k)
			switch key {
			case "UNIT", "HELP":
				key = map[string]string{"UNIT": "unit", "HELP": "help"}[key]
			}
			if r.w.JSON() {
				r.w.Key("field_" + sanitizeKey(key))
				r.w.B = decode.AppendJSONBytes(r.w.B, v)
			} else {
				r.w.B = append(r.w.B, ' ')
				r.w.B = append(r.w.B, sanitizeKey(key)...)
				r.w.B = append(r.w.B, '=')
				r.w.B = appendQuoted(r.w.B, v)
			}
		}
		r.end(ref)
	}
}

// sanitizeKey keeps the letters, digits and underscores of a field name.
func sanitizeKey(k string) string {
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		if c := k[i]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "field"
	}
	return string(b)
}

func (r *renderer) histogramsV1(c *cursor, float bool) {
	if c.left() == 0 {
		return
	}
	baseRef, baseT := c.be64(), int64(c.be64())
	for c.left() > 0 && c.err == nil {
		dref, dt := c.varint(), c.varint()
		c.histogram(&r.h, float)
		if c.err == nil {
			r.histogram(uint64(int64(baseRef)+dref), baseT+dt, 0)
		}
	}
}

func (r *renderer) histogramsV2(c *cursor, float bool) {
	if c.left() == 0 {
		return
	}
	firstRef, firstT, firstST := c.varint(), c.varint(), c.varint()
	var prevRef, prevST int64
	for i := 0; c.left() > 0 && c.err == nil; i++ {
		ref, t, st := firstRef, firstT, firstST
		if i > 0 {
			ref, t = prevRef+c.varint(), firstT+c.varint()
			st = readST(c, prevST, firstST)
		}
		prevRef, prevST = ref, st
		c.histogram(&r.h, float)
		if c.err == nil {
			r.histogram(uint64(ref), t, st)
		}
	}
}

// counterResetHints names a histogram's counter reset hint.
var counterResetHints = []string{"unknown", "reset", "not_reset", "gauge"}

func (r *renderer) histogram(ref uint64, t, st int64) {
	h := &r.h
	kind := "histogram"
	if h.float {
		kind = "float-histogram"
	}
	r.begin(kind, ref)
	r.time("t", t)
	if st != 0 {
		r.startTime(st)
	}
	r.field("schema")
	r.w.B = strconv.AppendInt(r.w.B, h.schema, 10)
	r.field("count")
	r.num(h.count)
	r.field("sum")
	r.num(h.sum)
	r.field("zero_threshold")
	r.num(h.zeroThresh)
	r.field("zero_count")
	r.num(h.zeroCount)
	r.field("counter_reset")
	hint := "hint(" + strconv.Itoa(int(h.hint)) + ")"
	if int(h.hint) < len(counterResetHints) {
		hint = counterResetHints[h.hint]
	}
	if r.w.JSON() {
		r.w.B = decode.AppendJSONString(r.w.B, hint)
	} else {
		r.w.B = append(r.w.B, hint...)
	}
	r.spans("pos_spans", h.posSpans)
	r.spans("neg_spans", h.negSpans)
	if h.float {
		r.floats("pos_buckets", h.posBkts)
		r.floats("neg_buckets", h.negBkts)
	} else {
		r.ints("pos_buckets", h.posInts)
		r.ints("neg_buckets", h.negInts)
	}
	if h.schema == customBucketsSchema {
		r.floats("custom_values", h.customValues)
	}
	r.end(ref)
}

// num writes a number: as appendValue in text, a JSON number (or string)
// in JSON.
func (r *renderer) num(v float64) {
	if r.w.JSON() {
		r.w.B = appendJSONValue(r.w.B, v)
	} else {
		r.w.B = appendValue(r.w.B, v)
	}
}

// list writes a list field: a,b,c in text, [a,b,c] in JSON.
func (r *renderer) list(name string, n int, item func(i int)) {
	r.field(name)
	if r.w.JSON() {
		r.w.B = append(r.w.B, '[')
	}
	for i := range n {
		if i > 0 {
			r.w.B = append(r.w.B, ',')
		}
		item(i)
	}
	if r.w.JSON() {
		r.w.B = append(r.w.B, ']')
	}
}

func (r *renderer) spans(name string, ss []span) {
	r.list(name, len(ss), func(i int) {
		if r.w.JSON() {
			r.w.B = append(r.w.B, `{"offset":`...)
			r.w.B = strconv.AppendInt(r.w.B, ss[i].off, 10)
			r.w.B = append(r.w.B, `,"length":`...)
			r.w.B = strconv.AppendUint(r.w.B, ss[i].len, 10)
			r.w.B = append(r.w.B, '}')
			return
		}
		r.w.B = strconv.AppendInt(r.w.B, ss[i].off, 10)
		r.w.B = append(r.w.B, ':')
		r.w.B = strconv.AppendUint(r.w.B, ss[i].len, 10)
	})
}

func (r *renderer) floats(name string, vs []float64) {
	r.list(name, len(vs), func(i int) { r.num(vs[i]) })
}

func (r *renderer) ints(name string, vs []int64) {
	r.list(name, len(vs), func(i int) { r.w.B = strconv.AppendInt(r.w.B, vs[i], 10) })
}

func (r *renderer) minValidTime(mint int64) {
	r.w.Begin()
	if r.w.JSON() {
		r.w.Key("type")
		r.w.B = decode.AppendJSONString(r.w.B, "min-valid-time")
		appendJSONTime(r.w, "t", mint)
	} else {
		r.w.B = append(r.w.B, "min-valid-time "...)
		r.w.B = appendTime(r.w.B, mint)
	}
	r.w.End()
}

// unknown shows a record of a type this decoder does not know, whole.
func (r *renderer) unknown(p []byte) {
	r.w.Begin()
	if r.w.JSON() {
		r.w.Key("type")
		r.w.B = decode.AppendJSONString(r.w.B, "unknown")
		r.w.Key("record_type")
		r.w.B = strconv.AppendUint(r.w.B, uint64(p[0]), 10)
		r.w.Key("bytes")
		r.w.B = decode.AppendJSONBase64(r.w.B, p)
	} else {
		r.w.B = append(r.w.B, "unknown type="...)
		r.w.B = strconv.AppendUint(r.w.B, uint64(p[0]), 10)
		r.w.B = append(r.w.B, " hex="...)
		r.w.B = appendHex(r.w.B, p)
	}
	r.w.End()
}
