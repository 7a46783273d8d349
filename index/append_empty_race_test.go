package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestAppendEmptyFileTwoFormats: two appenders hold tables of one empty
// file, made before either wrote: one guessed a leveldb log (an empty file
// opened without a format), the other was told TFRecord (recfs append
// --create tfrecord that lost the race to create, a --rw mount's mkdir with
// --new-format tfrecord). Whichever writes second must not take the first
// one's acknowledged record for a torn tail of its own format and cut it:
// both records are in the file afterwards, in one format.
func TestAppendEmptyFileTwoFormats(t *testing.T) {
	ctx := context.Background()
	for _, firstIsTFR := range []bool{true, false} {
		name := map[bool]string{true: "tfrecord first", false: "leveldb first"}[firstIsTFR]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cache := filepath.Join(dir, "cache")
			path := filepath.Join(dir, "new.rec")
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			guess, err := Open(ctx, path, Options{CacheDir: cache, Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer guess.Close()
			told, err := Open(ctx, path, Options{CacheDir: cache, Writable: true, Format: codec.TFRecord})
			if err != nil {
				t.Fatal(err)
			}
			defer told.Close()
			first, second := told, guess
			if !firstIsTFR {
				first, second = guess, told
			}
			if _, err := first.Append(ctx, [][]byte{[]byte("first")}, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := second.Append(ctx, [][]byte{[]byte("second")}, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			fresh, err := Open(ctx, path, Options{CacheDir: "-"})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			var got [][]byte
			for i := range fresh.Len() {
				got = append(got, readRecord(t, fresh, i))
			}
			if len(got) != 2 || !bytes.Equal(got[0], []byte("first")) || !bytes.Equal(got[1], []byte("second")) || len(fresh.Damage()) > 0 {
				t.Fatalf("file holds %q as %v, damage %v; want first and second", got, fresh.Format(), fresh.Damage())
			}
			if saved, _ := filepath.Glob(filepath.Join(cache, "torn", "*")); len(saved) > 0 {
				t.Errorf("an acknowledged record was cut as a torn tail: %v", saved)
			}
		})
	}
}
