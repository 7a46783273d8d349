package recfsio

import (
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/index"
)

// TestDecodeBatches decodes a WAL of WriteBatches in many ranges: each
// record's rendering is what the decoder seam gives `recfs cat --decode
// batch --json` for it.
func TestDecodeBatches(t *testing.T) {
	dir := t.TempDir()
	var recs [][]byte
	for i := range 300 {
		recs = append(recs, codectest.PutBatch(uint64(100+i), "key-"+string(rune('a'+i%26)), "value\x00"+string(rune('A'+i%26))))
	}
	path := writeFile(t, dir, "000003.log", leveldbBytes(t, recs))
	d := DecodeOptions{Mode: "batch", JSON: true}

	tb, err := index.Open(t.Context(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	plan, err := decoders.Prepare(decoders.Spec{Mode: d.Mode, Output: decode.Output{JSON: d.JSON}})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := plan.Open(tb, decode.Env{Path: path, Format: tb.Format()})
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for n := range tb.Len() {
		out, err := sess.Render(nil, tb, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(out))
	}
	if len(want) != len(recs) || want[0] == string(recs[0]) {
		t.Fatalf("the seam rendered %d records (first %q): not decoded", len(want), want[0])
	}

	p, s := beam.NewPipelineWithRoot()
	got := Decode(s, filepath.Join(dir, "*.log"), Options{CacheDir: t.TempDir(), SplitBytes: 1 << 10}, d)
	passert.Equals(s, got, want...)
	sum := run(t, p)
	if sum.Restrictions < 5 {
		t.Errorf("only %d restrictions", sum.Restrictions)
	}
	t.Logf("first rendering %q", want[0])
}
