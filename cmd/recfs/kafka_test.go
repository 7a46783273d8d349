package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// kafkaFile writes a segment of three batches: offsets 100-102, a commit
// marker at 103, then 104-105 (with a header and a null value), and
// returns its path.
func kafkaFile(t *testing.T) string {
	var seg []byte
	seg = append(seg, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 100, BaseTimestamp: 1700000000000, ProducerID: 9, Attr: 0x10,
		Records: []codectest.KafkaRecord{{Key: []byte("a"), Value: []byte("alpha")}, {Key: []byte("b"), Value: []byte("beta")}, {Value: []byte("gamma")}}})...)
	seg = append(seg, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 103, Attr: 0x30, ProducerID: 9,
		Records: []codectest.KafkaRecord{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}}})...)
	seg = append(seg, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: 104, BaseTimestamp: 1700000001000,
		Records: []codectest.KafkaRecord{{Key: []byte("d"), Value: []byte("delta"), Headers: []codectest.KafkaHeader{{Key: "trace", Value: []byte("t-1")}}}, {Key: []byte("e")}}})...)
	p := filepath.Join(t.TempDir(), fmt.Sprintf("%020d.log", 100))
	if err := os.WriteFile(p, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKafkaCommands: info, ls, cat (by number and by --offset), cat
// --decode kafka and verify work on a segment; append refuses with the
// reason.
func TestKafkaCommands(t *testing.T) {
	p := kafkaFile(t)
	info := mustRun(t, "info", p)
	for _, want := range []string{"format:   kafka", "batches:  3", "first offset: 100", "last offset: 105", "control batches: 1", "commit markers: 1", "records:  5"} {
		if !strings.Contains(info, want) {
			t.Errorf("info lacks %q:\n%s", want, info)
		}
	}
	var in struct {
		Facts map[string]any `json:"facts"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", p)), &in); err != nil || in.Facts["transactional_batches"] != 2.0 {
		t.Errorf("info --json facts %v, %v", in.Facts, err)
	}
	if got := mustRun(t, "ls", p); !strings.HasSuffix(strings.Split(got, "\n")[3], "  104") {
		t.Errorf("ls: the fourth record's line does not end with its offset:\n%s", got)
	}
	if got := mustRun(t, "ls", "--json", "--offset", "105", p); !strings.Contains(got, `"n":4`) || !strings.Contains(got, `"kafka_offset":105`) {
		t.Errorf("ls --json --offset 105: %s", got)
	}
	if got := mustRun(t, "cat", p, "--sep", ","); got != "alpha,beta,gamma,delta,," {
		t.Errorf("cat: %q", got)
	}
	if got := mustRun(t, "cat", "--offset", "102-104", "--sep", ",", p); got != "gamma,delta," {
		t.Errorf("cat --offset 102-104: %q", got)
	}
	if got := mustRun(t, "cat", "--offset", "101,105", "--json", p); strings.Count(got, `"kafka_offset"`) != 2 {
		t.Errorf("cat --offset --json: %s", got)
	}
	r := recfs(t, "cat", "--offset", "103", p)
	if r.code != 1 || !strings.Contains(r.stderr, "no record at Kafka offset 103") || !strings.Contains(r.stderr, "offsets 100 to 105") {
		t.Errorf("cat --offset of the commit marker: exit %d, %s", r.code, r.stderr)
	}
	dec := mustRun(t, "cat", "--decode", "kafka", p)
	if !strings.Contains(dec, "offset=104\ttime=2023-11-14T22:13:21.000Z\tkey=d\theader.trace=t-1\tvalue=delta\n") ||
		!strings.Contains(dec, "offset=105\ttime=") || !strings.Contains(dec, "value=\\N\n") {
		t.Errorf("cat --decode kafka:\n%s", dec)
	}
	if auto := mustRun(t, "cat", "--decode", "auto", p); auto != dec {
		t.Errorf("--decode auto differs from --decode kafka:\n%s", auto)
	}
	mustRun(t, "verify", p)
	in2 := filepath.Join(t.TempDir(), "in")
	os.WriteFile(in2, []byte("x"), 0o644)
	r = recfs(t, "append", p, in2)
	if r.code == 0 || !strings.Contains(r.stderr, "written by their broker") {
		t.Errorf("append: exit %d, %s", r.code, r.stderr)
	}
}
