package interop

// --decode example against two independent writers of tf.train.Example:
// the npm package @roboflow/tfrecords (under node) and Go types generated
// by protoc-gen-go from the messages' .proto: every record decodes to
// exactly the features written, read from a TFRecord file through recfs's
// own index and decoder session.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/test/internal/tfexamplepb"
	"github.com/recfs/recfs/test/internal/tfrnode"
)

// decodeFile decodes every record of the record file at path with the
// registry's decoder mode (auto included) and returns the texts.
func decodeFile(t *testing.T, path, mode string, o decode.Output) []string {
	t.Helper()
	tab, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	plan, err := decoders.Prepare(decoders.Spec{Mode: mode, Output: o})
	if err != nil {
		t.Fatal(err)
	}
	s, why, err := plan.Open(tab, decode.Env{Path: path, Format: tab.Format()})
	if err != nil || s == nil {
		t.Fatalf("%s: no decoder (%s, %v)", path, why, err)
	}
	var out []string
	for n := int64(0); n < tab.Len(); n++ {
		text, err := s.Render(nil, tab, 0, n)
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		out = append(out, string(text))
	}
	return out
}

// exampleJSON is a decoded Example: its features by name.
type exampleJSON struct {
	Features     map[string][]json.RawMessage   `json:"features"`
	Context      map[string][]json.RawMessage   `json:"context"`
	FeatureLists map[string][][]json.RawMessage `json:"feature_lists"`
}

// bytesValue reads a decoded bytes value: a string, or the marked base64
// form.
func bytesValue(t *testing.T, v json.RawMessage) []byte {
	t.Helper()
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []byte(s)
	}
	var m struct{ Base64 string }
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatalf("bytes value %s: %v", v, err)
	}
	b, err := base64.StdEncoding.DecodeString(m.Base64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// float32Value reads a decoded float value: a number, or NaN and the
// infinities as protojson's strings.
func float32Value(t *testing.T, v json.RawMessage) float32 {
	t.Helper()
	var s string
	if json.Unmarshal(v, &s) == nil {
		switch s {
		case "NaN":
			return float32(math.NaN())
		case "Infinity":
			return float32(math.Inf(1))
		case "-Infinity":
			return float32(math.Inf(-1))
		}
		t.Fatalf("float value %s", v)
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		t.Fatal(err)
	}
	return float32(f)
}

func TestDecodeExampleRoboflow(t *testing.T) {
	dir := tfrnode.Need(t)
	p := filepath.Join(t.TempDir(), "labelled.json")
	tfrnode.Run(t, "labelled", "300", p)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var made struct {
		Payloads []string `json:"payloads"`
		Features []struct {
			Label   []int64   `json:"label"`
			Name    []string  `json:"name"`
			Weights []float64 `json:"weights"`
			IDs     []int64   `json:"ids"`
			Blob    []string  `json:"blob"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &made); err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for _, s := range made.Payloads {
		r, _ := base64.StdEncoding.DecodeString(s)
		recs = append(recs, r)
	}
	file := filepath.Join(t.TempDir(), "labelled.tfrecord")
	if err := os.WriteFile(file, tfrnode.Build(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	texts := decodeFile(t, file, "auto", decode.Output{})
	if len(texts) != len(made.Features) {
		t.Fatalf("%d records decoded, node wrote %d (%s)", len(texts), len(made.Features), dir)
	}
	for i, text := range texts {
		var ex exampleJSON
		if err := json.Unmarshal([]byte(text), &ex); err != nil {
			t.Fatalf("record %d: %v\n%s", i, err, text)
		}
		want := made.Features[i]
		if len(ex.Features) != 5 {
			t.Fatalf("record %d: features %v", i, ex.Features)
		}
		var ints = func(name string) []int64 {
			var out []int64
			for _, v := range ex.Features[name] {
				var x int64
				if err := json.Unmarshal(v, &x); err != nil {
					t.Fatalf("record %d %s: %v", i, name, err)
				}
				out = append(out, x)
			}
			return out
		}
		if !slices.Equal(ints("label"), want.Label) || !slices.Equal(ints("ids"), want.IDs) {
			t.Fatalf("record %d: label %v ids %v, node wrote %v %v\n%s", i, ints("label"), ints("ids"), want.Label, want.IDs, text)
		}
		if len(ex.Features["name"]) != 1 || string(bytesValue(t, ex.Features["name"][0])) != want.Name[0] {
			t.Fatalf("record %d: name %s, node wrote %q", i, ex.Features["name"], want.Name)
		}
		blob, _ := base64.StdEncoding.DecodeString(want.Blob[0])
		if len(ex.Features["blob"]) != 1 || string(bytesValue(t, ex.Features["blob"][0])) != string(blob) {
			t.Fatalf("record %d: blob %s, node wrote %x", i, ex.Features["blob"], blob)
		}
		if len(ex.Features["weights"]) != len(want.Weights) {
			t.Fatalf("record %d: weights %s", i, ex.Features["weights"])
		}
		for j, w := range want.Weights {
			if got := float32Value(t, ex.Features["weights"][j]); got != float32(w) {
				t.Fatalf("record %d: weight %d is %v, node wrote %v", i, j, got, float32(w))
			}
		}
	}
	t.Logf("%d Examples written by @roboflow/tfrecords decode to the features written", len(texts))
}

// randFeature returns a Feature of random values of a random kind.
func randFeature(rng *rand.Rand) *tfexamplepb.Feature {
	n := rng.Intn(5)
	switch rng.Intn(3) {
	case 0:
		l := &tfexamplepb.BytesList{}
		for range n {
			texts := []string{"horse", "", "café ✓", "a\"b\\c\n", "\x00\xff"}
			l.Value = append(l.Value, []byte(texts[rng.Intn(len(texts))]))
		}
		return &tfexamplepb.Feature{Kind: &tfexamplepb.Feature_BytesList{BytesList: l}}
	case 1:
		l := &tfexamplepb.FloatList{}
		for range n {
			specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, math.MaxFloat32, math.SmallestNonzeroFloat32}
			v := float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(20)-10)))
			if rng.Intn(5) == 0 {
				v = specials[rng.Intn(len(specials))]
			}
			l.Value = append(l.Value, v)
		}
		return &tfexamplepb.Feature{Kind: &tfexamplepb.Feature_FloatList{FloatList: l}}
	}
	l := &tfexamplepb.Int64List{}
	for range n {
		l.Value = append(l.Value, int64(rng.Uint64()>>uint(rng.Intn(64))))
	}
	return &tfexamplepb.Feature{Kind: &tfexamplepb.Feature_Int64List{Int64List: l}}
}

func randFeatures(rng *rand.Rand) *tfexamplepb.Features {
	f := &tfexamplepb.Features{Feature: map[string]*tfexamplepb.Feature{}}
	for range rng.Intn(6) {
		f.Feature[fmt.Sprintf("f%d é", rng.Intn(10))] = randFeature(rng)
	}
	return f
}

// checkFeature compares a decoded value list with the Feature written.
func checkFeature(t *testing.T, what string, got []json.RawMessage, f *tfexamplepb.Feature) {
	t.Helper()
	switch k := f.Kind.(type) {
	case *tfexamplepb.Feature_BytesList:
		if len(got) != len(k.BytesList.Value) {
			t.Fatalf("%s: %d values, %d written", what, len(got), len(k.BytesList.Value))
		}
		for i, v := range k.BytesList.Value {
			if string(bytesValue(t, got[i])) != string(v) {
				t.Fatalf("%s[%d]: %s, wrote %q", what, i, got[i], v)
			}
		}
	case *tfexamplepb.Feature_FloatList:
		if len(got) != len(k.FloatList.Value) {
			t.Fatalf("%s: %d values, %d written", what, len(got), len(k.FloatList.Value))
		}
		for i, v := range k.FloatList.Value {
			if g := float32Value(t, got[i]); g != v && !(g != g && v != v) {
				t.Fatalf("%s[%d]: %s, wrote %v", what, i, got[i], v)
			}
		}
	case *tfexamplepb.Feature_Int64List:
		if len(got) != len(k.Int64List.Value) {
			t.Fatalf("%s: %d values, %d written", what, len(got), len(k.Int64List.Value))
		}
		for i, v := range k.Int64List.Value {
			if string(got[i]) != fmt.Sprint(v) {
				t.Fatalf("%s[%d]: %s, wrote %d", what, i, got[i], v)
			}
		}
	}
}

func checkFeatures(t *testing.T, what string, got map[string][]json.RawMessage, want *tfexamplepb.Features) {
	t.Helper()
	if len(got) != len(want.GetFeature()) {
		t.Fatalf("%s: %d features, %d written", what, len(got), len(want.GetFeature()))
	}
	for name, f := range want.GetFeature() {
		checkFeature(t, what+" "+name, got[name], f)
	}
}

func TestDecodeExampleGenerated(t *testing.T) {
	for _, seed := range testSeeds(t, 2) {
		rng := rand.New(rand.NewSource(seed))
		var recs [][]byte
		var msgs []proto.Message
		for i := 0; i < 200; i++ {
			var m proto.Message
			if i%3 == 2 {
				lists := &tfexamplepb.FeatureLists{FeatureList: map[string]*tfexamplepb.FeatureList{}}
				for range 1 + rng.Intn(3) {
					fl := &tfexamplepb.FeatureList{}
					for range rng.Intn(4) {
						fl.Feature = append(fl.Feature, randFeature(rng))
					}
					lists.FeatureList[fmt.Sprintf("frames%d", rng.Intn(5))] = fl
				}
				m = &tfexamplepb.SequenceExample{Context: randFeatures(rng), FeatureLists: lists}
			} else {
				m = &tfexamplepb.Example{Features: randFeatures(rng)}
			}
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			recs, msgs = append(recs, b), append(msgs, m)
		}
		file := filepath.Join(t.TempDir(), "generated.tfrecord")
		if err := os.WriteFile(file, tfrWrite(t, recs), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, o := range []decode.Output{{}, {JSON: true}} {
			texts := decodeFile(t, file, "example", o)
			for i, text := range texts {
				var ex exampleJSON
				if err := json.Unmarshal([]byte(text), &ex); err != nil {
					t.Fatalf("seed %d record %d: %v\n%s", seed, i, err, text)
				}
				what := fmt.Sprintf("seed %d record %d", seed, i)
				switch m := msgs[i].(type) {
				case *tfexamplepb.Example:
					if ex.Context != nil || ex.FeatureLists != nil {
						t.Fatalf("%s: an Example decoded as %s", what, text)
					}
					checkFeatures(t, what, ex.Features, m.Features)
				case *tfexamplepb.SequenceExample:
					checkFeatures(t, what+" context", ex.Context, m.Context)
					if len(ex.FeatureLists) != len(m.FeatureLists.FeatureList) {
						t.Fatalf("%s: feature lists %s", what, text)
					}
					for name, fl := range m.FeatureLists.FeatureList {
						if len(ex.FeatureLists[name]) != len(fl.Feature) {
							t.Fatalf("%s: list %s: %s", what, name, text)
						}
						for j, f := range fl.Feature {
							checkFeature(t, fmt.Sprintf("%s %s[%d]", what, name, j), ex.FeatureLists[name][j], f)
						}
					}
				}
			}
		}
	}
}
