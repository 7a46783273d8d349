package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/recfs/recfs/fs"
)

// recInfo is what a record directory's .recfs says, parsed.
type recInfo struct {
	fields [][2]string // key, value in order, without the damage lines
	damage []damage
	format string
}

// damage is one damaged (or stale) range of a record file.
type damage struct {
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	Reason string `json:"reason"`
	Stale  bool   `json:"stale,omitempty"` // the end of a recycled log, not damage
}

// maxInfo bounds how much of .recfs is read.
const maxInfo = 1 << 20

// info reads and parses the .recfs of the record directory dir (see
// fs.FormatInfo for its lines).
func (h *Handler) info(ctx context.Context, dir fs.Node) (*recInfo, error) {
	n, err := h.t.Lookup(ctx, dir, fs.InfoName)
	if err != nil {
		return nil, err
	}
	f, err := h.t.Open(ctx, n)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text, err := io.ReadAll(io.NewSectionReader(f, 0, maxInfo))
	if err != nil {
		return nil, err
	}
	return parseInfo(text), nil
}

// parseInfo parses the text of .recfs.
func parseInfo(text []byte) *recInfo {
	in := &recInfo{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, maxInfo)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		switch k {
		case "damage", "stale":
			if d, ok := parseDamage(v); ok {
				d.Stale = k == "stale"
				in.damage = append(in.damage, d)
				continue
			}
		case "format":
			in.format = v
		}
		in.fields = append(in.fields, [2]string{k, v})
	}
	return in
}

// parseDamage parses "offset=N length=N reason=QUOTED".
func parseDamage(v string) (damage, bool) {
	var d damage
	for _, part := range []string{"offset=", " length=", " reason="} {
		if !strings.HasPrefix(v, part) {
			return d, false
		}
		v = v[len(part):]
		if part == " reason=" {
			s, err := strconv.Unquote(v)
			d.Reason = s
			return d, err == nil
		}
		end := strings.IndexByte(v, ' ')
		if end < 0 {
			return d, false
		}
		n, err := strconv.ParseInt(v[:end], 10, 64)
		if err != nil {
			return d, false
		}
		if part == "offset=" {
			d.Offset = n
		} else {
			d.Length = n
		}
		v = v[end:]
	}
	return d, false
}
