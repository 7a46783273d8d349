package index

import "github.com/recfs/recfs/codec/decode"

// Optional capabilities of a table whose format keeps more than payloads.
type (
	// metaTable is a table that keeps fields beside each record's
	// payload (a Kafka record's offset, timestamp, key and headers).
	metaTable interface {
		meta(tb *Table, s *snapshot, k int64, m *decode.Meta) error
	}
	// seqTable is a table whose format numbers its records itself (Kafka
	// offsets): seq is record k's number; seqSearch returns the first
	// record (of n) whose number is at least seq when the numbers rise
	// from record to record, rising false when they do not.
	seqTable interface {
		seq(k int64) int64
		seqSearch(seq int64, n int64) (k int64, rising bool)
	}
	// factTable is a table whose format says more about its file than
	// its records (Kafka: batches, offsets, producers).
	factTable interface {
		facts() []Fact
	}
)

// factsOf returns tab's facts, nil when its format has none.
func factsOf(tab table) []Fact {
	if ft, ok := tab.(factTable); ok {
		return ft.facts()
	}
	return nil
}

// RecordMeta fills m with what the format keeps beside record n's payload
// (for a Kafka segment: the record's offset as Seq, its timestamp, key and
// headers, and the record's bytes as Frame); it leaves m empty for formats
// that keep nothing. It implements decode.MetaReader. Slices in m are
// valid until the next call and must not be changed.
func (t *Table) RecordMeta(n int64, m *decode.Meta) error {
	s := t.s()
	*m = decode.Meta{}
	mt, ok := s.tab.(metaTable)
	if !ok {
		return nil
	}
	if n < 0 || n >= s.n {
		return ErrRange
	}
	if err := mt.meta(t, s, n, m); err != nil {
		return err
	}
	if cerr := t.checkSource(s, true); cerr != nil {
		*m = decode.Meta{}
		return cerr
	}
	return nil
}

// Seq returns the number the format gives record n (a Kafka offset), and
// whether it gives one.
func (t *Table) Seq(n int64) (int64, bool) {
	s := t.s()
	st, ok := s.tab.(seqTable)
	if !ok || n < 0 || n >= s.n {
		return 0, false
	}
	return st.seq(n), true
}

// HasSeq reports whether the format numbers its records itself.
func (t *Table) HasSeq() bool {
	_, ok := t.s().tab.(seqTable)
	return ok
}

// SeqRecords calls fn, in record order, with the number of every record
// whose format number (Seq) lies in [lo, hi], until fn returns false. It
// reports false when the format numbers no records. Where the numbers
// rise from record to record (Kafka offsets do, but in damaged segments)
// it finds the first by binary search; otherwise it looks at every
// record.
func (t *Table) SeqRecords(lo, hi int64, fn func(n int64) bool) bool {
	s := t.s()
	st, ok := s.tab.(seqTable)
	if !ok {
		return false
	}
	k, rising := st.seqSearch(lo, s.n)
	if !rising {
		k = 0
	}
	for ; k < s.n; k++ {
		v := st.seq(k)
		if v > hi && rising {
			break
		}
		if v >= lo && v <= hi && !fn(k) {
			break
		}
	}
	return true
}

// BySeq returns the number of the record whose format number is seq.
func (t *Table) BySeq(seq int64) (n int64, ok bool) {
	n = -1
	t.SeqRecords(seq, seq, func(k int64) bool { n = k; return false })
	return n, n >= 0
}
