package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/tfrecord"
)

// TestTFRecordAppendAfterTornNestedRecord: a crashed writer left a record
// torn whose data is itself TFRecord framing (a record holding a TFRecord
// file). The records inside its partial data are not the file's: an
// append goes where the torn record starts, so that the acknowledged
// record is found by a fresh scan and by an independent reader, and not
// swallowed by the torn record's length once the file has grown past it.
func TestTFRecordAppendAfterTornNestedRecord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.tfrecord")
	base := codectest.Records(2, 500, 'a')
	good := tfrBytes(base)
	nested := tfrBytes(codectest.Records(3, 300, 'n'))
	whole := tfrecord.AppendRecord(nil, nested)
	torn := whole[:len(whole)-200] // the nested file's last record cut short
	if err := os.WriteFile(path, append(bytes.Clone(good), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(ctx, path, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	add := [][]byte{bytes.Repeat([]byte("x"), 1000)} // longer than what was cut
	if _, err := tb.Append(ctx, add, AppendOptions{Sync: true}); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	want := append(append([][]byte{}, base...), add...)
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, tfrBytes(want)) {
		t.Errorf("file after the append is %d bytes, not the %d of its %d intact records and the new one", len(got), len(tfrBytes(want)), len(base))
	}
	fresh, err := Open(ctx, path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	n := fresh.Len()
	if n == 0 || !bytes.Equal(readRecord(t, fresh, n-1), add[0]) {
		t.Fatalf("a fresh scan finds %d records (damage %v), the appended one not last", n, fresh.Damage())
	}
}
