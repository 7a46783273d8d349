package interop

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// kafkaVector is one record of a vector's manifest (kafka/ in
// codec/codectest's vectors): nil key, value or header value is null.
type kafkaVector struct {
	Offset    int64          `json:"offset"`
	Timestamp int64          `json:"timestamp"`
	Key       []byte         `json:"key"`
	Value     []byte         `json:"value"`
	Headers   []kafkaVHeader `json:"headers,omitempty"`
	Control   bool           `json:"control,omitempty"`
}

type kafkaVHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// TestKafkaWriteVectors writes the reference vectors of codec/kafka's unit
// tests (segments by franz-go and by sarama, and what they hold) into the
// directory RECFS_KAFKA_VECTORS names; without it, it checks that the
// vectors in codec/codectest/testdata/vectors/kafka still hold what the
// corpus holds and that franz-go reads them so.
func TestKafkaWriteVectors(t *testing.T) {
	dir := os.Getenv("RECFS_KAFKA_VECTORS")
	check := dir == ""
	if check {
		dir = "../../codec/codectest/testdata/vectors/kafka"
	}
	corpus := kafkaCorpus(rand.New(rand.NewSource(11)))
	small := append(corpus[:10:10], corpus[12:]...) // without the 1 MiB values
	sets := map[string][]kBatch{"v2": small, "v1": kafkaLegacy(1), "v0": kafkaLegacy(0)}
	for name, batches := range sets {
		for wname, write := range map[string]func(testing.TB, []kBatch) []byte{"franz-go": franzSegment, "sarama": saramaSegment} {
			base := filepath.Join(dir, wname+"-"+name)
			var recs []kafkaVector
			for _, r := range want(batches) {
				v := kafkaVector{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Control: r.Control}
				for _, h := range r.Headers {
					v.Headers = append(v.Headers, kafkaVHeader(h))
				}
				recs = append(recs, v)
			}
			manifest, err := json.MarshalIndent(recs, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if check {
				// The segments' bytes depend on the libraries' versions
				// (compressors); what they hold must not.
				got, err := os.ReadFile(base + ".json")
				if err != nil {
					t.Fatalf("no vectors in %s: %v", dir, err)
				}
				if string(got) != string(manifest)+"\n" {
					t.Errorf("%s.json differs from what the corpus holds now: regenerate the vectors", base)
				}
				if seg, err := os.ReadFile(base + ".log"); err != nil || sameRecs(franzRead(t, seg), want(batches)) != nil {
					t.Errorf("%s.log: franz-go does not read the manifest's records (%v)", base, err)
				}
				continue
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".log", write(t, batches), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".json", append(manifest, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
