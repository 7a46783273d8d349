package promdecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

// FuzzDecode: on any record (after a series record) the decoder never
// panics, stays within decode.MaxOutput, fails only with misfits, and
// writes lines that are valid JSON in JSON mode.
func FuzzDecode(f *testing.F) {
	f.Add(rec(typeSamples).be(1).be(t0).v(0).v(0).f(1).b)
	f.Add(rec(typeHistogramSamples).be(8).be(t0).v(0).v(0).byte1(2).v(-53).f(0.001).uv(2).uv(10).f(18.5).uv(1).v(0).uv(2).uv(0).uv(1).v(1).uv(0).uv(1).f(3).b)
	f.Add(rec(typeMetadata).uv(9).byte1(1).uv(1).str("UNIT").str("s").b)
	f.Add([]byte{typeSamplesV2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0})
	series := rec(typeSeries).be(1).labels("__name__", "up", "a", "\x00\xff").b
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []decode.Output{{}, {JSON: true}, {Number: true}} {
			out, err := render(t, New(decode.Env{}), o, series, b)
			if err != nil && !strings.Contains(err.Error(), "record") {
				t.Fatalf("error %v", err)
			}
			if len(out) > decode.MaxOutput(len(b)) {
				t.Fatalf("%d bytes of text for %d bytes", len(out), len(b))
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
