package open

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/index"
)

// TestEveryReadsWhatItOpened: OpenEvery opens a local file once, and both
// of its ways read that file: the pass of a leveldb log, and the table of
// a format a pass refuses, even once the name is gone.
func TestEveryReadsWhatItOpened(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	w := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	var tf []byte
	for _, r := range []string{"one", "two", "three"} {
		if _, err := w.WriteRecord([]byte(r)); err != nil {
			t.Fatal(err)
		}
		tf = tfrecord.AppendRecord(tf, []byte(r))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := Options{Index: index.Options{CacheDir: "-"}}
	for _, tc := range []struct {
		name string
		data []byte
		pass bool
	}{{"x.log", log.Bytes(), true}, {"x.tfrecord", tf, false}} {
		p := filepath.Join(t.TempDir(), tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := OpenEvery(p, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		pass, err := e.Pass(ctx)
		switch {
		case tc.pass && err != nil:
			t.Errorf("%s: Pass: %v", tc.name, err)
		case tc.pass:
			n := 0
			for pass.Next() {
				n++
			}
			if n != 3 || pass.Err() != nil {
				t.Errorf("%s: pass read %d records, %v; want 3, nil", tc.name, n, pass.Err())
			}
		case !errors.Is(err, index.ErrNoPass):
			t.Errorf("%s: Pass: %v, want ErrNoPass", tc.name, err)
		}
		st, err := e.Seq(ctx)
		if err != nil {
			t.Fatalf("%s: Seq after the name went: %v", tc.name, err)
		}
		if st.Len() != 3 {
			t.Errorf("%s: Seq has %d records, want 3", tc.name, st.Len())
		}
		if err := e.Close(); err != nil {
			t.Errorf("%s: Close after Seq: %v", tc.name, err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("%s: Seq.Close: %v", tc.name, err)
		}
		if _, err := e.Pass(ctx); !errors.Is(err, index.ErrNoPass) {
			t.Errorf("%s: Pass after Seq: %v, want ErrNoPass", tc.name, err)
		}
	}
}
