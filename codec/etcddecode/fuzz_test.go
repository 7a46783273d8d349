package etcddecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcdwal"
)

// FuzzDecode: on any payload the decoder never panics, stays within
// decode.MaxOutput, and writes valid JSON lines in JSON mode.
func FuzzDecode(f *testing.F) {
	f.Add(ent(2, 8, msg(6, msg(1, msg(1, uint64(0), 2, uint64(3), 3, "/a", 7, "x"), 2, msg(2, msg(1, "/a", 2, "y"))))))
	f.Add(ent(2, 5, msg(4, msg(1, "k", 2, append([]byte("k8s\x00"), msg(1, msg(1, "v1", 2, "Pod"))...)))))
	f.Add(walRec(etcdwal.SnapshotType, msg(1, uint64(50), 3, msg(1, uint64(1)))))
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, o := range []decode.Output{{}, {JSON: true}} {
			out, _ := render(t, o, p)
			if len(out) > decode.MaxOutput(len(p)) {
				t.Fatalf("%d bytes of text for %d bytes", len(out), len(p))
			}
			if o.JSON && out != "" {
				for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					if !json.Valid([]byte(line)) {
						t.Fatalf("invalid JSON %q", line)
					}
				}
			}
		}
	})
}
