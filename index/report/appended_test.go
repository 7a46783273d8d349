package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/recfs/recfs/index"
)

// TestAppended: the line and the JSON object (fields in name order) of
// recfs append, with and without records, and the line of a moved tail.
func TestAppended(t *testing.T) {
	t.Parallel()
	mv := MovedOf(index.MovedTail{Path: "f.log", Off: 4096, Len: 10, SavedTo: "/c/torn/f.log.1", Reason: index.MovedTorn})
	for _, c := range []struct {
		a          Appended
		text, json string
	}{
		{AppendedOf("f.log", 998, 3, []Moved{mv}),
			"appended 3 record(s) to f.log as 000998..001000\n",
			`{"file":"f.log","first":998,"last":1000,"moved":[{"offset":4096,"bytes":10,"saved_to":"/c/torn/f.log.1","reason":"a torn record"}],"records":3,"status":"appended","total":1001}`},
		{AppendedOf("f.log", 7, 0, []Moved{}),
			"appended 0 record(s) to f.log\n",
			`{"file":"f.log","first":7,"last":6,"moved":[],"records":0,"status":"appended","total":7}`},
	} {
		var b bytes.Buffer
		if err := c.a.WriteText(&b); err != nil || b.String() != c.text {
			t.Errorf("text %q, %v; want %q", b.String(), err, c.text)
		}
		if js, err := json.Marshal(c.a); err != nil || string(js) != c.json {
			t.Errorf("JSON %s, %v; want %s", js, err, c.json)
		}
	}
	if got, want := mv.String(), "moved the 10 bytes at offset 4096 out of f.log (a torn record); saved in /c/torn/f.log.1"; got != want {
		t.Errorf("moved line %q, want %q", got, want)
	}
	rolled := MovedOf(index.MovedTail{Path: "a.rio", Off: 64, Len: 5, Reason: index.MovedRollback})
	if got, want := rolled.String(), "moved the 5 bytes at offset 64 out of a.rio ("+index.MovedRollback+")"; got != want {
		t.Errorf("moved line %q, want %q", got, want)
	}
}
