package index

import (
	"io"

	"github.com/recfs/recfs/codec/kafka"
)

// kafkaFound is a record the proving scan of a segment found, with its
// batch.
type kafkaFound struct {
	b kafka.Batch
	r kafka.Record
}

// proveFrom scans src from the batch of record k-1 (the whole segment for
// k == 0), passing over that batch's records up to k-1 and every control
// record, and yields the data records from k on. Record k-1's batch was
// proven to start where the table says, so the scan starts on a batch.
func (t *kafkaTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	ko := kafka.Options{Strict: o.Strict}
	var from kBatch
	pass := int64(0) // records of the start batch to pass over
	if k > 0 && len(t.batches) > 0 {
		from = t.batches[t.batchOf(k-1)]
		ko.Start, ko.Prev, pass = from.off, -1, k-from.first
	}
	sc := kafka.NewScanner(src, s.size, ko)
	p := &scanProof[kafkaFound]{more: sc.Next, fail: sc.Err,
		record: func() kafkaFound { return kafkaFound{sc.Batch(), sc.Record()} },
		skip: func(f kafkaFound) bool {
			if f.b.Control() {
				return true
			}
			if pass > 0 && f.b.Off == from.off {
				pass--
				return true
			}
			return false
		},
		same:   t.holds,
		offset: func(f kafkaFound) int64 { return f.b.Off }}
	return p, k, nil
}

// holds reports whether f is the table's record k: in the batch the table
// says (its place, length, header fields), at its place in the batch's
// data, with its value length and offset.
func (t *kafkaTable) holds(k int64, f kafkaFound) bool {
	bi := t.batchOf(k)
	if bi < 0 {
		return false
	}
	w, b, r := t.batches[bi], f.b, f.r
	if w.off != b.Off || w.n != b.Len || w.magic != b.Magic || w.attr != b.Attr || w.base != b.BaseOffset ||
		w.last != b.LastOffset || w.baseTS != b.BaseTimestamp || w.maxTS != b.MaxTimestamp {
		return false
	}
	if !b.Compressed() && b.Magic == 2 && int64(w.dlen) != b.End()-b.DataOff() || r.Pos+r.Len > int64(w.dlen) {
		return false
	}
	kr := t.recs.at(k)
	return int64(kr.pos) == r.Pos && int64(kr.vlen) == max(r.ValueLen, 0) && int64(kr.delta) == r.Offset-b.BaseOffset
}

var _ prover = (*kafkaTable)(nil)
