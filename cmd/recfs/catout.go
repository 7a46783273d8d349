package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
)

// catMode is how cat writes one record that is not decoded: its payload,
// after its number with --number, or a JSON line with --json; then the
// separator (not after a JSON line).
type catMode struct {
	asJSON, number, text bool
	sep                  string
	label                string // the file, when cat writes several: before --number, in JSON lines
	buf                  []byte // copy buffer of copyBufSize bytes
}

// write writes record n of t to w as m says.
func (m catMode) write(ctx context.Context, w *bufio.Writer, t *index.Table, n int64) error {
	var err error
	switch {
	case m.asJSON:
		return writeRecordJSON(ctx, w, t, n, m.buf, m.text, m.label)
	case m.number:
		if _, err = w.WriteString(labelled(m.label, recordNumber(n, t.Len())) + "\t"); err == nil {
			err = copyRecord(ctx, w, t, n, m.buf)
		}
	default:
		err = copyRecord(ctx, w, t, n, m.buf)
	}
	if err != nil {
		return err
	}
	_, err = w.WriteString(m.sep)
	return err
}

// labelled returns "label:s", or s without a label.
func labelled(label, s string) string {
	if label == "" {
		return s
	}
	return label + ":" + s
}

// labelLines prefixes each line of decoded output: "label:" before text
// lines, a "file" field first in JSON lines.
func labelLines(dst, out []byte, label string, asJSON bool) []byte {
	prefix := []byte(label + ":")
	if asJSON {
		f, _ := json.Marshal(label)
		prefix = append(append([]byte(`"file":`), f...), ',')
	}
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line = out[:i+1]
		}
		out = out[len(line):]
		if asJSON && len(line) > 0 && line[0] == '{' {
			dst = append(append(append(dst, '{'), prefix...), line[1:]...)
			continue
		}
		if asJSON {
			dst = append(dst, line...)
			continue
		}
		dst = append(append(dst, prefix...), line...)
	}
	return dst
}

// catMany writes the records sel of each file in turn, each record labelled
// with its file under --number and --json. A file that fails is named on
// standard error and the others go on; the exit status is then 1.
func catMany(cmd *cobra.Command, files []string, sel []recordRange, offs []seqRange, o index.Options, m catMode, dec *decodeFlags) error {
	fails := failures{cmd: cmd}
	for _, f := range files {
		m.label = f
		if err := fails.add(f, catOne(cmd, f, sel, offs, o, m, dec, false)); err != nil {
			return err
		}
	}
	return fails.result()
}
