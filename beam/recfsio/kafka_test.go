package recfsio

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/recfs/recfs/codec/codectest"
)

func init() {
	beam.RegisterFunction(seqKey)
}

// seqKey renders a Record as its number, Kafka offset and value.
func seqKey(r Record) string {
	if !r.HasSeq {
		return fmt.Sprintf("%d@none:%s", r.N, r.Payload)
	}
	return fmt.Sprintf("%d@%d:%s", r.N, r.Seq, r.Payload)
}

// TestReadKafkaOffsets reads a Kafka segment (batches built by hand by
// codectest, a transaction marker after every other batch taking an
// offset) through small ranges: ReadWithMeta gives every data record once
// with its Kafka offset, markers left out.
func TestReadKafkaOffsets(t *testing.T) {
	var file []byte
	var keys []any
	off, n := int64(5000), int64(0)
	for b := range 6 {
		rs := make([]codectest.KafkaRecord, 20)
		for i := range rs {
			v := fmt.Sprintf("batch %d value %d", b, i)
			rs[i] = codectest.KafkaRecord{Key: fmt.Appendf(nil, "k%d", i), Value: []byte(v)}
			keys = append(keys, fmt.Sprintf("%d@%d:%s", n, off+int64(i), v))
			n++
		}
		file = append(file, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Records: rs, ProducerID: 9, Attr: 0x10})...)
		off += int64(len(rs))
		if b%2 == 1 {
			file = append(file, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Attr: 0x30, ProducerID: 9,
				Records: []codectest.KafkaRecord{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}}})...)
			off++
		}
	}
	dir := t.TempDir()
	writeFile(t, dir, "00000000000000005000.log", file)
	p, s := beam.NewPipelineWithRoot()
	got := beam.ParDo(s, seqKey, ReadWithMeta(s, filepath.Join(dir, "*.log"), Options{CacheDir: t.TempDir(), SplitBytes: 256}))
	passert.Equals(s, got, keys...)
	sum := run(t, p)
	if sum.Records != int64(len(keys)) || sum.Restrictions < 3 {
		t.Errorf("summary %+v: want %d records in several ranges", sum, len(keys))
	}
}
