package tfexample

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
)

// msg builds a protobuf message (codectest.Message).
var msg = codectest.Message

// Feature builders.
func bytesF(vs ...string) []byte {
	var l []any
	for _, v := range vs {
		l = append(l, 1, v)
	}
	return msg(fBytesList, msg(l...))
}

func int64F(vs ...int64) []byte {
	var packed []byte
	for _, v := range vs {
		packed = protowire.AppendVarint(packed, uint64(v))
	}
	return msg(fInt64List, msg(1, packed))
}

func floatF(vs ...float32) []byte {
	var packed []byte
	for _, v := range vs {
		packed = protowire.AppendFixed32(packed, math.Float32bits(v))
	}
	return msg(fFloatList, msg(1, packed))
}

// features builds a Features map from name, Feature pairs.
func features(kv ...any) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		b = append(b, msg(1, msg(1, kv[i].(string), 2, kv[i+1].([]byte)))...)
	}
	return b
}

func TestExample(t *testing.T) {
	horse := msg(1, features("name", bytesF("horse"), "label", int64F(7), "weight", floatF(0.5, -2), "blob", bytesF("\xff\x00", "a\"b\n")))
	tests := []struct {
		name string
		rec  []byte
		want string
		err  bool
	}{
		{"example", horse, `{"features": {"blob": [{"base64":"/wA="}, "a\"b\n"], "label": [7], "name": ["horse"], "weight": [0.5, -2]}}`, false},
		{"empty", nil, `{"features": {}}`, false},
		{"empty feature", msg(1, features("x", []byte{})), `{"features": {"x": []}}`, false},
		{"unpacked and big values", msg(1, features("i", msg(3, msg(1, uint64(math.MaxUint64), 1, uint64(1<<40))), "f", msg(2, msg(1, math.Float32bits(1e30), 1, math.Float32bits(float32(math.NaN())), 1, math.Float32bits(float32(math.Inf(-1))))))),
			`{"features": {"f": [1e+30, "NaN", "-Infinity"], "i": [-1, 1099511627776]}}`, false},
		{"last map entry and oneof member win, lists merge", append(msg(1, features("a", int64F(1), "a", append(int64F(2), bytesF("s")...))), msg(1, features("b", append(int64F(3), int64F(4)...)))...),
			`{"features": {"a": ["s"], "b": [3, 4]}}`, false},
		{"sequence", msg(1, features("id", bytesF("clip-1")), 2, msg(1, msg(1, "frame", 2, append(msg(1, int64F(1, 2)), msg(1, int64F(3))...)))),
			`{"context": {"id": ["clip-1"]}, "feature_lists": {"frame": [[1, 2], [3]]}}`, false},
		{"sequence without context", msg(2, msg(1, msg(1, "f", 2, msg(1, floatF(1))))), `{"context": {}, "feature_lists": {"f": [[1]]}}`, false},
		{"unknown top field", msg(1, features("a", int64F(1)), 3, uint64(1)), "", true},
		{"unknown feature kind", msg(1, features("a", msg(4, "x"))), "", true},
		{"wrong wire type", msg(1, features("a", msg(3, msg(1, uint32(5))))), "", true},
		{"truncated", horse[:len(horse)-1], "", true},
		{"packed floats not whole", msg(1, features("f", msg(2, msg(1, []byte{1, 2, 3})))), "", true},
		{"giant varint", msg(1, features("i", msg(3, msg(1, bytes.Repeat([]byte{0xff}, 11))))), "", true},
		{"group", []byte{0x0b, 0x0c}, "", true},
		{"a WriteBatch", []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 'k', 1, 'v'}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendJSON([]byte("pre"), tc.rec)
			if tc.err != (err != nil) || !tc.err && string(got) != "pre"+tc.want || tc.err && string(got) != "pre" {
				t.Fatalf("%s, %v; want %s (error %t)", got, err, tc.want, tc.err)
			}
			if err != nil {
				if !errors.Is(err, decode.ErrMisfit) {
					t.Fatalf("error %v is no misfit", err)
				}
				return
			}
			var v any
			if err := json.Unmarshal(got[3:], &v); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
		})
	}
}

// TestExampleOutputs: text (grep '"label": \[7\]' finds it), --number and
// JSON Lines.
func TestExampleOutputs(t *testing.T) {
	r := &decode.Record{N: 12, Payload: msg(1, features("label", int64F(7)))}
	for _, tc := range []struct {
		o    decode.Output
		want string
	}{
		{decode.Output{}, `{"features": {"label": [7]}}` + "\n"},
		{decode.Output{Number: true}, "000012\t" + `{"features": {"label": [7]}}` + "\n"},
		{decode.Output{JSON: true}, `{"n":12,"features":{"label":[7]}}` + "\n"},
	} {
		w := decode.NewWriter(nil, tc.o, r.N)
		if err := Decode(w, r); err != nil || string(w.B) != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.o, w.B, err, tc.want)
		}
	}
	w := decode.NewWriter([]byte("x"), decode.Output{Number: true}, 1)
	if err := Decode(w, &decode.Record{Payload: []byte{0xff}}); err == nil || string(w.B) != "x" {
		t.Errorf("misfit wrote %q, %v", w.B, err)
	}
}

// TestExampleHostile: a packed field of ten million values (fewer under
// the race detector) renders within the output bound.
func TestExampleHostile(t *testing.T) {
	packed := bytes.Repeat([]byte{1}, hostileElems)
	rec := msg(1, features("x", msg(3, msg(1, packed))))
	out, err := AppendJSON(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > decode.MaxOutput(len(rec)) || !strings.HasPrefix(string(out), `{"features": {"x": [1, 1, 1`) {
		t.Fatalf("%d bytes of text for %d of record", len(out), len(rec))
	}
}

func TestDetect(t *testing.T) {
	ex := msg(1, features("a", int64F(1)))
	if !Detect([][]byte{ex, ex}) || Detect([][]byte{ex, {0xff}}) || Detect([][]byte{nil, nil}) || Detect([][]byte{[]byte(`{"a":1}`)}) {
		t.Error("Detect")
	}
}

func FuzzExample(f *testing.F) {
	f.Add(msg(1, features("name", bytesF("horse"), "label", int64F(7), "weight", floatF(0.5))))
	f.Add(msg(1, features("id", bytesF("clip-1")), 2, msg(1, msg(1, "frame", 2, msg(1, int64F(1, 2))))))
	f.Add(msg(1, features("i", msg(3, msg(1, uint64(5))), "f", msg(2, msg(1, uint32(7))))))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []decode.Output{{}, {Number: true}, {JSON: true}} {
			w := decode.NewWriter(nil, o, 0)
			err := Decode(w, &decode.Record{Payload: b})
			if err != nil {
				if len(w.B) != 0 || !errors.Is(err, decode.ErrMisfit) {
					t.Fatalf("%v with %q written", err, w.B)
				}
				continue
			}
			if len(w.B) > decode.MaxOutput(len(b)) {
				t.Fatalf("%d bytes for %d", len(w.B), len(b))
			}
			line := w.B
			if o.Number {
				line = line[7:]
			}
			var v map[string]any
			if err := json.Unmarshal(line, &v); err != nil || bytes.Count(w.B, []byte("\n")) != 1 {
				t.Fatalf("%q: %v", w.B, err)
			}
		}
	})
}

func BenchmarkExample(b *testing.B) {
	rec := msg(1, features("label", int64F(7), "name", bytesF("image-0000042.jpg"), "weight", floatF(0.5, 0.25, 1, 2),
		"blob", bytesF(string(bytes.Repeat([]byte{0xff, 0xd8}, 32)))))
	w := decode.NewWriter(nil, decode.Output{}, 0)
	r := &decode.Record{Payload: rec}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		w.B = w.B[:0]
		if err := Decode(w, r); err != nil {
			b.Fatal(err)
		}
	}
}
