package kafka

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// vectorRecord is one record of a vector's manifest, as test/interop
// writes it (TestKafkaWriteVectors): nil key, value or header value is
// null.
type vectorRecord struct {
	Offset    int64  `json:"offset"`
	Timestamp int64  `json:"timestamp"`
	Key       []byte `json:"key"`
	Value     []byte `json:"value"`
	Headers   []struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	} `json:"headers"`
	Control bool `json:"control"`
}

// TestVectors: segments written by franz-go and by sarama (every codec,
// log-append time, null keys and values, headers, transaction markers; v0
// and v1 message sets with compressed wrappers) read record for record as
// their manifests say.
func TestVectors(t *testing.T) {
	t.Parallel()
	logs := codectest.Vectors(t, "kafka/*.log", nil)
	if len(logs) < 6 {
		t.Fatalf("%d Kafka vectors in %s", len(logs), codectest.VectorDir())
	}
	for _, p := range logs {
		file, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".log") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var want []vectorRecord
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if !Probe(bytes.NewReader(file), int64(len(file))) {
			t.Errorf("%s: not recognised", p)
		}
		got, s := scanAll(t, file, Options{})
		if len(s.Damage()) != 0 || len(got) != len(want) {
			t.Fatalf("%s: %d records, damage %v; want %d", p, len(got), s.Damage(), len(want))
		}
		for i, w := range want {
			g := got[i]
			same := g.Offset == w.Offset && g.Timestamp == w.Timestamp && g.batch.Control() == w.Control &&
				bytes.Equal(g.key, w.Key) && (g.key == nil) == (w.Key == nil) &&
				bytes.Equal(g.value, w.Value) && (g.value == nil) == (w.Value == nil) && len(g.headers) == len(w.Headers)
			for j := 0; same && j < len(w.Headers); j++ {
				h := g.headers[j]
				same = string(h.Key) == w.Headers[j].Key && bytes.Equal(h.Value, w.Headers[j].Value) && (h.Value == nil) == (w.Headers[j].Value == nil)
			}
			if !same {
				t.Fatalf("%s: record %d: offset %d ts %d key %q value %q; want %+v", p, i, g.Offset, g.Timestamp, g.key, g.value, w)
			}
		}
	}
}
