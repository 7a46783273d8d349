package report

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
)

// TestIndexedText: each state of `recfs index` has its sentence, and the
// JSON object its fields in name order.
func TestIndexedText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ state, want string }{
		{"built", "f.log: index built: leveldb, 3 records, 12 payload bytes, 1 damaged ranges, 1.5ms\n"},
		{"refreshed", "f.log: index refreshed (the file grew or changed): leveldb, 3 records, 12 payload bytes, 1 damaged ranges, 1.5ms\n"},
		{"up_to_date", "f.log: index up to date (loaded from the cache): leveldb, 3 records, 12 payload bytes, 1 damaged ranges, 1.5ms\n"},
	} {
		in := Indexed{File: "f.log", Format: "leveldb", Index: c.state, Records: 3, PayloadBytes: 12, DamagedRanges: 1,
			Seconds: 0.0015, took: 1500 * time.Microsecond}
		var b bytes.Buffer
		if err := in.WriteText(&b); err != nil || b.String() != c.want {
			t.Errorf("%s: %q, %v; want %q", c.state, b.String(), err, c.want)
		}
	}
	js, err := json.Marshal(Indexed{File: "f.log", Format: "leveldb", Index: "built", Records: 3, PayloadBytes: 12, Seconds: 0.5})
	want := `{"cache_file":"","damaged_ranges":0,"file":"f.log","format":"leveldb","index":"built","payload_bytes":12,"records":3,"seconds":0.5}`
	if err != nil || string(js) != want {
		t.Errorf("JSON %s, %v; want %s", js, err, want)
	}
}

// TestIndexedOf: a table scanned now is "built", with its counts.
func TestIndexedOf(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	lw := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	for _, r := range []string{"a", "bb", "ccc"} {
		if _, err := lw.WriteRecord([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	tb, err := index.Build(context.Background(), bytes.NewReader(log.Bytes()), int64(log.Len()), index.Options{Format: codec.LevelDB, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	in := IndexedOf("f.log", tb, false)
	if in.Index != "built" || in.Records != 3 || in.PayloadBytes != 6 || in.Format != "leveldb" || in.File != "f.log" {
		t.Errorf("IndexedOf: %+v", in)
	}
}

func TestHumanBytes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {2 << 40, "2.0 TiB"}, {2048 << 40, "2048.0 TiB"},
	} {
		if got := HumanBytes(c.n); got != c.want {
			t.Errorf("HumanBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestPrunedText: the prune line, and its JSON object's fields in name
// order.
func TestPrunedText(t *testing.T) {
	t.Parallel()
	p := PrunedOf(index.PruneResult{Dir: "/c/recfs", Kept: 3, KeptBytes: 2 << 20, Removed: 2, RemovedBytes: 1536})
	var b bytes.Buffer
	if err := p.WriteText(&b); err != nil || b.String() != "pruned /c/recfs: removed 2 saved indexes (1.5 KiB), kept 3 (2.0 MiB)\n" {
		t.Errorf("text %q, %v", b.String(), err)
	}
	js, err := json.Marshal(p)
	if want := `{"kept":3,"kept_bytes":2097152,"pruned":"/c/recfs","removed":2,"removed_bytes":1536}`; err != nil || string(js) != want {
		t.Errorf("JSON %s, %v; want %s", js, err, want)
	}
}
