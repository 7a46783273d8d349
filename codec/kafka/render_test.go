package kafka

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
)

// kafkaRec builds a decode.Record the way index.Table hands one out.
func kafkaRec(n, offset int64, ts time.Time, key, value []byte, hs []codectest.KafkaHeader) *decode.Record {
	frame := codectest.AppendKafkaRecord(nil, codectest.KafkaRecord{Key: key, Value: value, Headers: hs}, 0)
	m := decode.Meta{Seq: offset, HasSeq: true, Time: ts, Key: key, HasKey: true, Frame: frame}
	for _, h := range hs {
		m.Headers = append(m.Headers, decode.Header{Key: h.Key, Value: h.Value})
	}
	// The session hands a null value over as an empty payload: the frame
	// says it is null.
	return &decode.Record{N: n, Payload: append([]byte{}, value...), Meta: m}
}

func render(t testing.TB, o DecoderOptions, out decode.Output, rec *decode.Record) (string, error) {
	d, err := PrepareDecoder(o)(decode.Env{})
	if err != nil {
		t.Fatal(err)
	}
	w := decode.NewWriter(nil, out, rec.N)
	err = d.Decode(w, rec)
	return string(w.B), err
}

// TestRender: records render as documented, in text and JSON, with nulls,
// escapes, headers and JSON values.
func TestRender(t *testing.T) {
	t.Parallel()
	ts := time.UnixMilli(1700000000123)
	hs := []codectest.KafkaHeader{{Key: "trace id", Value: []byte("a\tb")}, {Key: "k=v", Value: nil}}
	for _, tc := range []struct {
		name string
		o    DecoderOptions
		out  decode.Output
		rec  *decode.Record
		want string
	}{
		{"text", DecoderOptions{}, decode.Output{}, kafkaRec(3, 42, ts, []byte("user-1"), []byte("hello world\n"), hs),
			"offset=42\ttime=2023-11-14T22:13:20.123Z\tkey=user-1\theader.trace id=a\\tb\theader.k\\x3dv=\\N\tvalue=hello world\\n\n"},
		{"text-null", DecoderOptions{}, decode.Output{}, kafkaRec(0, 7, time.Time{}, nil, nil, nil),
			"offset=7\ttime=\\N\tkey=\\N\tvalue=\\N\n"},
		{"text-binary", DecoderOptions{}, decode.Output{}, kafkaRec(0, 7, ts, []byte{}, []byte{0xff, 'a', 0, '\\', 0xe2, 0x82, 0xac}, nil),
			"offset=7\ttime=2023-11-14T22:13:20.123Z\tkey=\tvalue=\\xffa\\x00\\\\€\n"},
		{"number", DecoderOptions{}, decode.Output{Number: true}, kafkaRec(3, 42, ts, []byte("k"), []byte("v"), nil),
			"000003\toffset=42\ttime=2023-11-14T22:13:20.123Z\tkey=k\tvalue=v\n"},
		{"json", DecoderOptions{}, decode.Output{JSON: true}, kafkaRec(3, 42, ts, []byte("k"), []byte{0xff}, hs),
			`{"n":3,"offset":42,"time":"2023-11-14T22:13:20.123Z","timestamp_ms":1700000000123,"key":"k","headers":[{"key":"trace id","value":"a\tb"},{"key":"k=v","value":null}],"value":{"base64":"/w=="}}` + "\n"},
		{"json-null", DecoderOptions{}, decode.Output{JSON: true}, kafkaRec(0, 1, time.Time{}, nil, nil, nil),
			`{"n":0,"offset":1,"time":null,"key":null,"headers":[],"value":null}` + "\n"},
		{"json-values", DecoderOptions{JSONValues: true}, decode.Output{JSON: true}, kafkaRec(0, 1, ts, []byte("k"), []byte("{ \"a\": [1, 2] }"), nil),
			`{"n":0,"offset":1,"time":"2023-11-14T22:13:20.123Z","timestamp_ms":1700000000123,"key":"k","headers":[],"value":{"a":[1,2]}}` + "\n"},
		{"json-values-text", DecoderOptions{JSONValues: true}, decode.Output{}, kafkaRec(0, 1, ts, []byte("k"), []byte("{ \"a\":\n 1 }"), nil),
			"offset=1\ttime=2023-11-14T22:13:20.123Z\tkey=k\tvalue={\"a\":1}\n"},
		{"inner", DecoderOptions{Values: decode.Static(decode.Func(upper))}, decode.Output{}, kafkaRec(2, 9, ts, []byte("k"), []byte("ab"), nil),
			"offset=9\ttime=2023-11-14T22:13:20.123Z\tkey=k\nAB\n"},
		{"inner-json", DecoderOptions{Values: decode.Static(decode.Func(upper))}, decode.Output{JSON: true}, kafkaRec(2, 9, ts, []byte("k"), []byte("ab"), nil),
			`{"n":2,"offset":9,"time":"2023-11-14T22:13:20.123Z","timestamp_ms":1700000000123,"key":"k","headers":[],"value":[{"n":2,"up":"AB"}]}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := render(t, tc.o, tc.out, tc.rec)
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, tc.want)
			}
			if tc.out.JSON && !json.Valid([]byte(got)) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
	if _, err := render(t, DecoderOptions{JSONValues: true}, decode.Output{}, kafkaRec(0, 1, ts, nil, []byte("not json"), nil)); err == nil {
		t.Error("kafka:json accepted a value that is not JSON")
	}
	if _, err := render(t, DecoderOptions{}, decode.Output{}, &decode.Record{Payload: []byte("x")}); err == nil {
		t.Error("a record without an offset rendered")
	}
}

// upper is a toy value decoder: one line, the value upper-cased.
func upper(w *decode.Writer, rec *decode.Record) error {
	w.Begin()
	if w.JSON() {
		w.Key("up")
		w.B = decode.AppendJSONBytes(w.B, bytes.ToUpper(rec.Payload))
	} else {
		w.B = append(w.B, bytes.ToUpper(rec.Payload)...)
	}
	w.End()
	return nil
}

// parseLine splits a text line back into its fields.
func parseLine(t *testing.T, line string) (key []byte, keyNull bool, hs []codectest.KafkaHeader, value []byte, valueNull bool) {
	for _, f := range strings.Split(strings.TrimSuffix(line, "\n"), "\t") {
		name, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q without =", f)
		}
		b, isNull, err := Unescape(v)
		if err != nil {
			t.Fatalf("field %q: %v", f, err)
		}
		switch {
		case name == "key":
			key, keyNull = b, isNull
		case name == "value":
			value, valueNull = b, isNull
		case strings.HasPrefix(name, "header."):
			hk, _, err := Unescape(strings.TrimPrefix(name, "header."))
			if err != nil {
				t.Fatal(err)
			}
			if isNull {
				b = nil
			}
			hs = append(hs, codectest.KafkaHeader{Key: string(hk), Value: b})
		}
	}
	return
}

// FuzzRender renders arbitrary keys, values and headers in both modes:
// text is one line whose fields unescape to the bytes (nulls kept), JSON
// is one valid object.
func FuzzRender(f *testing.F) {
	f.Add([]byte("k"), []byte("v"), "h", []byte("x"), false, false)
	f.Add([]byte{0xff, '\n'}, []byte("a\\tb=c"), "=\t", []byte(nil), true, true)
	f.Fuzz(func(t *testing.T, key, value []byte, hk string, hv []byte, nullKey, nullValue bool) {
		if nullKey {
			key = nil
		} else if key == nil {
			key = []byte{}
		}
		if nullValue {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		hs := []codectest.KafkaHeader{{Key: hk, Value: hv}}
		rec := kafkaRec(1, 5, time.UnixMilli(1), key, value, hs)
		text, err := render(t, DecoderOptions{}, decode.Output{}, rec)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(text, "\n") != 1 {
			t.Fatalf("not one line: %q", text)
		}
		k, kn, gotHs, v, vn := parseLine(t, text)
		if kn != (key == nil) || !bytes.Equal(k, key) || vn != (value == nil) || !bytes.Equal(v, value) ||
			len(gotHs) != 1 || gotHs[0].Key != hk || !bytes.Equal(gotHs[0].Value, hv) || (gotHs[0].Value == nil) != (hv == nil) {
			t.Fatalf("%q does not give back key %q value %q header %q=%q", text, key, value, hk, hv)
		}
		js, err := render(t, DecoderOptions{}, decode.Output{JSON: true}, rec)
		if err != nil || !json.Valid([]byte(js)) || strings.Count(js, "\n") != 1 {
			t.Fatalf("JSON %q: %v", js, err)
		}
	})
}
