package etcdwal

import (
	"bytes"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// walRec is a record to write: its type and data.
type walRec struct {
	typ  int64
	data []byte
}

// walFile frames recs after a crc record of seed, followed by prealloc
// zero bytes, and returns the file and the payloads etcd's decoder would
// return for each record (the crc record first).
func walFile(t testing.TB, seed uint32, recs []walRec, prealloc int) ([]byte, [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, WriterOptions{Seed: seed})
	var want [][]byte
	all := append([]walRec{{CrcType, nil}}, recs...)
	crc := seed
	for _, r := range all {
		if _, err := w.WriteRecord(r.typ, r.data); err != nil {
			t.Fatal(err)
		}
		if r.typ != CrcType {
			crc = codec.CRC32CUpdate(crc, r.data)
		}
		want = append(want, AppendRecord(nil, WALRecord{Type: r.typ, CRC: crc, Data: r.data}))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return append(buf.Bytes(), make([]byte, prealloc)...), want
}

// entries returns n entry records of about size bytes each.
func entries(n, size int) []walRec {
	recs := []walRec{{MetadataType, []byte{8, 1, 16, 2}}, {SnapshotType, []byte{}}}
	for i := range n {
		d := bytes.Repeat([]byte{byte(i + 1)}, size+i%9)
		recs = append(recs, walRec{EntryType, d})
		if i%5 == 4 {
			recs = append(recs, walRec{StateType, []byte{8, byte(i), 16, 1}})
		}
	}
	return recs
}

// scanAll scans b and returns the payloads, the records, the damage and
// the scan's error.
func scanAll(t testing.TB, b []byte, o Options) ([][]byte, []Record, []codec.Damage, error) {
	t.Helper()
	r := bytes.NewReader(b)
	return codectest.ScanAll(t, NewScanner(r, int64(len(b)), o), func(rec *Record) ([]byte, error) {
		return Read(r, *rec, nil)
	})
}
