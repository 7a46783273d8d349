package etcddecode

import (
	"bytes"
	"strconv"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/etcdwal"
	"github.com/recfs/recfs/codec/internal/pbwire"
)

// New returns the decoder of etcd WAL records (--decode etcd); it has no
// state and is safe for concurrent use.
func New() decode.Decoder { return decode.Func(Decode) }

// Decode renders one walpb.Record (see the package documentation). A
// record or request that does not parse keeps the lines before the fault
// and fails as a misfit.
func Decode(w *decode.Writer, rec *decode.Record) error {
	r, err := etcdwal.ParseRecord(rec.Payload)
	if err != nil {
		return decode.Misfit(0, "not a walpb.Record")
	}
	l := &line{w: w}
	switch r.Type {
	case etcdwal.CrcType:
		l.begin("crc")
		if w.JSON() {
			l.num("crc", int64(r.CRC))
		} else {
			w.B = append(w.B, " 0x"...)
			w.B = strconv.AppendUint(w.B, uint64(r.CRC), 16)
		}
		l.end()
	case etcdwal.MetadataType:
		return metadata(l, r.Data)
	case etcdwal.StateType:
		return hardState(l, r.Data)
	case etcdwal.SnapshotType:
		return snapshot(l, r.Data)
	case etcdwal.EntryType:
		return entry(l, r.Data)
	default:
		l.begin("record")
		l.num("record_type", r.Type)
		l.pos("data", r.Data, true)
		l.end()
	}
	return nil
}

// line writes one line: a kind, then positional and named fields.
type line struct {
	w      *decode.Writer
	entry  bool // an entry line: its prefix follows
	term   uint64
	index  uint64
	etype  string
	prefix []string // the operation's words so far ("txn", "success")
	user   string   // the request's user (its header), shown at the end of its lines
}

// begin starts a line of kind (a record type, or for an entry line the
// operation, after the entry's prefix).
func (l *line) begin(kind string) {
	w := l.w
	w.Begin()
	if w.JSON() {
		if l.entry {
			w.Key("type")
			w.B = append(w.B, `"entry"`...)
			w.Key("term")
			w.B = strconv.AppendUint(w.B, l.term, 10)
			w.Key("index")
			w.B = strconv.AppendUint(w.B, l.index, 10)
			w.Key("entry_type")
			w.B = decode.AppendJSONString(w.B, l.etype)
			w.Key("op")
		} else {
			w.Key("type")
		}
		op := kind
		for i := len(l.prefix) - 1; i >= 0; i-- {
			op = l.prefix[i] + " " + op
		}
		w.B = decode.AppendJSONString(w.B, op)
		return
	}
	if l.entry {
		w.B = append(w.B, "entry term="...)
		w.B = strconv.AppendUint(w.B, l.term, 10)
		w.B = append(w.B, " index="...)
		w.B = strconv.AppendUint(w.B, l.index, 10)
		w.B = append(w.B, " type="...)
		w.B = append(w.B, l.etype...)
		w.B = append(w.B, ' ')
		for _, p := range l.prefix {
			w.B = append(w.B, p...)
			w.B = append(w.B, ' ')
		}
	}
	w.B = append(w.B, kind...)
}

// pos writes a positional bytes field (its name is its JSON key); last
// says it ends the line's positional fields, so spaces stay.
func (l *line) pos(name string, b []byte, last bool) {
	if l.w.JSON() {
		l.w.Key(name)
		l.w.B = decode.AppendJSONBytes(l.w.B, b)
		return
	}
	l.w.B = append(l.w.B, ' ')
	l.w.B = appendEscaped(l.w.B, b, last)
}

// named writes name=text (a JSON string).
func (l *line) named(name, text string) {
	if l.w.JSON() {
		l.w.Key(name)
		l.w.B = decode.AppendJSONString(l.w.B, text)
		return
	}
	l.w.B = append(l.w.B, ' ')
	l.w.B = append(l.w.B, name...)
	l.w.B = append(l.w.B, '=')
	l.w.B = append(l.w.B, text...)
}

// namedBytes writes name=bytes, escaped (a JSON string or base64).
func (l *line) namedBytes(name string, b []byte) {
	if l.w.JSON() {
		l.w.Key(name)
		l.w.B = decode.AppendJSONBytes(l.w.B, b)
		return
	}
	l.w.B = append(l.w.B, ' ')
	l.w.B = append(l.w.B, name...)
	l.w.B = append(l.w.B, '=')
	l.w.B = appendEscaped(l.w.B, b, false)
}

// num writes name=v (a JSON number).
func (l *line) num(name string, v int64) {
	if l.w.JSON() {
		l.w.Key(name)
		l.w.B = strconv.AppendInt(l.w.B, v, 10)
		return
	}
	l.named(name, strconv.FormatInt(v, 10))
}

// id writes name=HEX, as etcd shows member and lease IDs.
func (l *line) id(name string, v uint64) { l.named(name, strconv.FormatUint(v, 16)) }

// flag writes name=true when set.
func (l *line) flag(name string, set bool) {
	if set {
		l.named(name, "true")
	}
}

// end ends the line, with the request's user when it has one.
func (l *line) end() {
	if l.user != "" {
		l.namedBytes("user", []byte(l.user))
	}
	l.w.End()
}

// metadata renders an etcdserverpb.Metadata.
func metadata(l *line, b []byte) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	l.begin("metadata")
	l.id("node", m.v[1])
	l.id("cluster", m.v[2])
	l.end()
	return nil
}

// hardState renders a raftpb.HardState.
func hardState(l *line, b []byte) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	l.begin("state")
	l.num("term", int64(m.v[1]))
	l.id("vote", m.v[2])
	l.num("commit", int64(m.v[3]))
	l.end()
	return nil
}

// snapshot renders a walpb.Snapshot with its raftpb.ConfState.
func snapshot(l *line, b []byte) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	l.begin("snapshot")
	l.num("index", int64(m.v[1]))
	l.num("term", int64(m.v[2]))
	lists := [6][]uint64{}
	autoLeave := false
	if err := fields(m.b[3], 0, func(f field) error {
		switch {
		case f.num >= 1 && f.num <= 4 && f.typ == 0:
			lists[f.num] = append(lists[f.num], f.v)
		case f.num >= 1 && f.num <= 4:
			for p := f.b; len(p) > 0; {
				v, n := pbwire.Varint(p)
				if n <= 0 {
					return decode.Misfit(-1, "bad packed conf state")
				}
				lists[f.num] = append(lists[f.num], v)
				p = p[n:]
			}
		case f.num == 5:
			autoLeave = f.v != 0
		}
		return nil
	}); err != nil {
		return err
	}
	for i, name := range []string{"", "voters", "learners", "voters_outgoing", "learners_next"} {
		if i == 0 || i > 1 && len(lists[i]) == 0 {
			continue
		}
		ids := make([]string, len(lists[i]))
		for k, v := range lists[i] {
			ids[k] = strconv.FormatUint(v, 16)
		}
		l.named(name, joinComma(ids))
	}
	l.flag("auto_leave", autoLeave)
	l.end()
	return nil
}

// joinComma joins with commas.
func joinComma(s []string) string {
	var b []byte
	for i, x := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, x...)
	}
	return string(b)
}

// entry renders a raftpb.Entry: one line, or one per request inside a
// normal entry.
func entry(l *line, b []byte) error {
	var typ uint64
	var data []byte
	err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			typ = f.v
		case 2:
			l.term = f.v
		case 3:
			l.index = f.v
		case 4:
			data = f.b
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.entry = true
	switch typ {
	case 0:
		l.etype = "normal"
		if len(data) == 0 {
			l.begin("empty")
			l.end()
			return nil
		}
		return normal(l, data)
	case 1:
		l.etype = "conf-change"
		return confChange(l, data)
	case 2:
		l.etype = "conf-change-v2"
		return confChangeV2(l, data)
	}
	l.etype = "type(" + strconv.FormatUint(typ, 10) + ")"
	l.begin("data")
	l.pos("data", data, true)
	l.end()
	return nil
}

// confChangeTypes names raftpb.ConfChangeType values.
var confChangeTypes = []string{"add-node", "remove-node", "update-node", "add-learner-node"}

func confChangeType(v uint64) string {
	if v < uint64(len(confChangeTypes)) {
		return confChangeTypes[v]
	}
	return "change(" + strconv.FormatUint(v, 10) + ")"
}

// confChange renders a raftpb.ConfChange.
func confChange(l *line, b []byte) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	l.begin(confChangeType(m.v[2]))
	l.id("node", m.v[3])
	if id := m.v[1]; id != 0 {
		l.id("id", id)
	}
	if ctx := m.b[4]; len(ctx) > 0 {
		l.namedBytes("context", ctx)
	}
	l.end()
	return nil
}

// confChangeV2 renders a raftpb.ConfChangeV2: its transition and changes.
func confChangeV2(l *line, b []byte) error {
	var transition uint64
	var changes []string
	var ctx []byte
	err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			transition = f.v
		case 2:
			var typ, node uint64
			if err := fields(f.b, 0, func(g field) error {
				switch g.num {
				case 1:
					typ = g.v
				case 2:
					node = g.v
				}
				return nil
			}); err != nil {
				return err
			}
			changes = append(changes, confChangeType(typ)+":"+strconv.FormatUint(node, 16))
		case 3:
			ctx = f.b
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.begin("change")
	l.num("transition", int64(transition))
	l.named("changes", joinComma(changes))
	if len(ctx) > 0 {
		l.namedBytes("context", ctx)
	}
	l.end()
	return nil
}

// k8sPrefix starts the protobuf encoding of a Kubernetes object.
var k8sPrefix = []byte("k8s\x00")

// value writes a value field: a Kubernetes object's kind and name first.
func (l *line) value(v []byte) {
	if bytes.HasPrefix(v, k8sPrefix) {
		if s, ok := k8sSummary(v[len(k8sPrefix):]); ok {
			if l.w.JSON() {
				l.w.Key("k8s")
				l.w.B = append(l.w.B, '{')
				for i, kv := range s {
					if i > 0 {
						l.w.B = append(l.w.B, ',')
					}
					l.w.B = decode.AppendJSONString(l.w.B, kv[0])
					l.w.B = append(l.w.B, ':')
					l.w.B = decode.AppendJSONBytes(l.w.B, []byte(kv[1]))
				}
				l.w.B = append(l.w.B, '}')
			} else {
				l.w.B = append(l.w.B, " k8s{"...)
				for i, kv := range s {
					if i > 0 {
						l.w.B = append(l.w.B, ' ')
					}
					l.w.B = append(l.w.B, kv[0]...)
					l.w.B = append(l.w.B, '=')
					l.w.B = appendEscaped(l.w.B, []byte(kv[1]), false)
				}
				l.w.B = append(l.w.B, '}')
			}
		}
	}
	l.pos("value", v, true)
}

// k8sSummary reads the apiVersion and kind of a runtime.Unknown and the
// namespace and name of the object's ObjectMeta.
func k8sSummary(b []byte) ([][2]string, bool) {
	var apiVersion, kind, ns, name string
	var raw []byte
	if fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			return fields(f.b, 0, func(g field) error {
				switch g.num {
				case 1:
					apiVersion = string(g.b)
				case 2:
					kind = string(g.b)
				}
				return nil
			})
		case 2:
			raw = f.b
		}
		return nil
	}) != nil || kind == "" {
		return nil, false
	}
	_ = fields(raw, 0, func(f field) error {
		if f.num != 1 || f.typ != 2 {
			return nil
		}
		return fields(f.b, 0, func(g field) error {
			switch g.num {
			case 1:
				name = string(g.b)
			case 3:
				ns = string(g.b)
			}
			return nil
		})
	})
	out := [][2]string{{"apiVersion", apiVersion}, {"kind", kind}}
	if ns != "" {
		out = append(out, [2]string{"namespace", ns})
	}
	if name != "" {
		out = append(out, [2]string{"name", name})
	}
	return out, true
}
