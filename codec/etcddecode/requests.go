package etcddecode

import (
	"strconv"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec/decode"
)

// normal renders a normal entry's data: an etcdserverpb.InternalRaftRequest
// (etcd 3), else, as etcd itself falls back, a v2 etcdserverpb.Request.
func normal(l *line, data []byte) error {
	var reqs []field
	var v2 []byte
	ok := fields(data, 0, func(f field) error {
		switch {
		case f.num == 1:
			if f.typ != protowire.VarintType {
				return wrong(f)
			}
		case f.typ != protowire.BytesType:
			return wrong(f)
		case f.num == 100:
			return fields(f.b, 0, func(g field) error {
				if g.num == 2 && g.typ == protowire.BytesType {
					l.user = string(g.b)
				}
				return nil
			})
		case f.num == 2:
			v2 = f.b
		default:
			reqs = append(reqs, f)
		}
		// Every request is a message.
		return fields(f.b, 0, func(field) error { return nil })
	}) == nil
	if !ok || len(reqs) == 0 && v2 == nil {
		l.user = ""
		return v2Request(l, data)
	}
	if v2 != nil {
		if err := v2Request(l, v2); err != nil {
			return err
		}
	}
	for _, r := range reqs {
		if err := request(l, r); err != nil {
			return err
		}
	}
	return nil
}

// request renders one request field of an InternalRaftRequest: the
// requests with a renderer of their own, then those of requests, then an
// unknown request. (Direct calls, not a table of functions: an indirect
// call would move every record's line to the heap.)
func request(l *line, r field) error {
	b := r.b
	switch r.num {
	case 3:
		return keyed(l, "range", b, 0, 1, 2)
	case 4:
		return put(l, b)
	case 5:
		return keyed(l, "delete-range", b, 0, 1, 2)
	case 6:
		return txn(l, b)
	case 11:
		return leaseCheckpoint(l, b)
	case 1203:
		return grantPermission(l, b)
	case 1204:
		return keyed(l, "role-revoke-permission", b, 1, 2, 3)
	case 1301:
		return memberAttr(l, b)
	}
	if k, ok := requests()[r.num]; ok {
		if k.nums != nil {
			return names(l, k.op, b, k.nums...)
		}
		return simple(l, k.op, b, k.scalars, k.hex)
	}
	l.begin("request")
	l.num("field", int64(r.num))
	l.pos("data", b, true)
	l.end()
	return nil
}

// requestKind is how a request renders: its operation, and either its
// scalar fields (see simple) or its name fields (see names).
type requestKind struct {
	op      string
	scalars scalars
	hex     map[string]bool    // scalars shown in hex
	nums    []protowire.Number // name fields, positional
}

// scalars names the scalar fields of a request message by number.
type scalars map[protowire.Number]string

// requests maps an InternalRaftRequest field number to how its request
// message renders, for the requests of scalars or names.
var requests = sync.OnceValue(func() map[protowire.Number]requestKind {
	return map[protowire.Number]requestKind{
		7:    {op: "compaction", scalars: scalars{1: "revision", 2: "physical"}},
		8:    {op: "lease-grant", scalars: scalars{2: "id", 1: "ttl"}, hex: hexID},
		9:    {op: "lease-revoke", scalars: scalars{1: "id"}, hex: hexID},
		10:   {op: "alarm", scalars: scalars{1: "action", 2: "member", 3: "alarm"}, hex: map[string]bool{"member": true}},
		1000: {op: "auth-enable"},
		1011: {op: "auth-disable"},
		1013: {op: "auth-status"},
		1012: {op: "authenticate", nums: []protowire.Number{1}},
		1100: {op: "user-add", nums: []protowire.Number{1}},
		1101: {op: "user-delete", nums: []protowire.Number{1}},
		1102: {op: "user-get", nums: []protowire.Number{1}},
		1103: {op: "user-change-password", nums: []protowire.Number{1}},
		1104: {op: "user-grant-role", nums: []protowire.Number{1, 2}},
		1105: {op: "user-revoke-role", nums: []protowire.Number{1, 2}},
		1106: {op: "user-list"},
		1107: {op: "role-list"},
		1200: {op: "role-add", nums: []protowire.Number{1}},
		1201: {op: "role-delete", nums: []protowire.Number{1}},
		1202: {op: "role-get", nums: []protowire.Number{1}},
		1300: {op: "cluster-version-set", nums: []protowire.Number{1}},
		1302: {op: "downgrade-info-set", scalars: scalars{1: "enabled", 2: "version"}},
	}
})

// hexID shows a request's "id" field in hex.
var hexID = map[string]bool{"id": true}

// leaseCheckpoint renders a LeaseCheckpointRequest: one line per
// checkpoint.
func leaseCheckpoint(l *line, b []byte) error {
	return fields(b, 0, func(f field) error {
		if f.num != 1 {
			return nil
		}
		return simple(l, "lease-checkpoint", f.b, checkpointFields, hexID)
	})
}

// checkpointFields names the fields of a LeaseCheckpoint.
var checkpointFields = scalars{1: "id", 2: "remaining_ttl"}

// simple renders a request of scalar fields as name=value, the fields
// named in hexIDs in hex; strings and bytes escaped.
func simple(l *line, op string, b []byte, names map[protowire.Number]string, hexIDs map[string]bool) error {
	type kv struct {
		name string
		f    field
	}
	var got []kv
	if err := fields(b, 0, func(f field) error {
		if n, ok := names[f.num]; ok {
			got = append(got, kv{n, f})
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin(op)
	for _, g := range got {
		switch {
		case g.f.typ == protowire.BytesType:
			l.namedBytes(g.name, g.f.b)
		case hexIDs[g.name]:
			l.id(g.name, g.f.v)
		default:
			l.num(g.name, int64(g.f.v))
		}
	}
	l.end()
	return nil
}

// names renders a request whose fields at nums are names (users, roles),
// positional in that order; passwords and tokens are left out.
func names(l *line, op string, b []byte, nums ...protowire.Number) error {
	vals := make([][]byte, len(nums))
	secret := false
	if err := fields(b, 0, func(f field) error {
		for i, n := range nums {
			if f.num == n && f.typ == protowire.BytesType {
				vals[i] = f.b
				return nil
			}
		}
		if f.typ == protowire.BytesType && len(f.b) > 0 {
			secret = true // a password, a hashed password or a token
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin(op)
	for i, v := range vals {
		l.pos([]string{"name", "role", "third"}[min(i, 2)], v, false)
	}
	if secret {
		l.named("password", "<redacted>")
	}
	l.end()
	return nil
}

// keyed renders a request with a name (none if nameF is 0), a key and a
// range end.
func keyed(l *line, op string, b []byte, nameF, keyF, endF protowire.Number) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	l.begin(op)
	if nameF != 0 {
		l.pos("name", m.b[nameF], false)
	}
	l.pos("key", m.b[keyF], false)
	if end := m.b[endF]; len(end) > 0 {
		l.pos("range_end", end, false)
	}
	l.end()
	return nil
}

// permTypes names authpb.Permission types.
var permTypes = []string{"read", "write", "readwrite"}

// grantPermission renders an AuthRoleGrantPermissionRequest.
func grantPermission(l *line, b []byte) error {
	var name, key, end []byte
	var perm uint64
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			name = f.b
		case 2:
			return fields(f.b, 0, func(g field) error {
				switch g.num {
				case 1:
					perm = g.v
				case 2:
					key = g.b
				case 3:
					end = g.b
				}
				return nil
			})
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin("role-grant-permission")
	l.pos("name", name, false)
	p := "perm(" + strconv.FormatUint(perm, 10) + ")"
	if perm < uint64(len(permTypes)) {
		p = permTypes[perm]
	}
	l.pos("perm", []byte(p), false)
	l.pos("key", key, false)
	if len(end) > 0 {
		l.pos("range_end", end, false)
	}
	l.end()
	return nil
}

// memberAttr renders a ClusterMemberAttrSetRequest.
func memberAttr(l *line, b []byte) error {
	var id uint64
	var name []byte
	var urls []string
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			id = f.v
		case 2:
			return fields(f.b, 0, func(g field) error {
				switch g.num {
				case 1:
					name = g.b
				case 2:
					urls = append(urls, string(g.b))
				}
				return nil
			})
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin("member-attr-set")
	l.id("member", id)
	l.namedBytes("name", name)
	l.namedBytes("client_urls", []byte(joinComma(urls)))
	l.end()
	return nil
}

// put renders a PutRequest.
func put(l *line, b []byte) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	l.begin("put")
	l.pos("key", m.b[1], false)
	l.value(m.b[2])
	if lease := m.v[3]; lease != 0 {
		l.id("lease", lease)
	}
	l.flag("prev_kv", m.v[4] != 0)
	l.flag("ignore_value", m.v[5] != 0)
	l.flag("ignore_lease", m.v[6] != 0)
	l.end()
	return nil
}

// deleteRange renders a DeleteRangeRequest (rangeReq a RangeRequest).
func deleteRange(l *line, b []byte) error { return keyed(l, "delete-range", b, 0, 1, 2) }
func rangeReq(l *line, b []byte) error    { return keyed(l, "range", b, 0, 1, 2) }

// compareResults and compareTargets name a Compare's enums.
var (
	compareResults = []string{"=", ">", "<", "!="}
	compareTargets = []string{"version", "create", "mod", "value", "lease"}
)

// txn renders a TxnRequest: a line per compare, then per operation of
// each branch.
func txn(l *line, b []byte) error {
	saved := l.prefix
	defer func() { l.prefix = saved }()
	l.prefix = append(saved[:len(saved):len(saved)], "txn")
	var cmps []field
	var branches []field
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			cmps = append(cmps, f)
		case 2, 3:
			branches = append(branches, f)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, c := range cmps {
		if err := compare(l, c.b); err != nil {
			return err
		}
	}
	base := l.prefix
	for _, br := range branches {
		l.prefix = append(base[:len(base):len(base)], map[protowire.Number]string{2: "success", 3: "failure"}[br.num])
		if err := fields(br.b, 0, func(op field) error {
			switch op.num {
			case 1:
				return rangeReq(l, op.b)
			case 2:
				return put(l, op.b)
			case 3:
				return deleteRange(l, op.b)
			case 4:
				return txn(l, op.b)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// compare renders one Compare.
func compare(l *line, b []byte) error {
	var result, target uint64
	var key, end, value []byte
	var num int64
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			result = f.v
		case 2:
			target = f.v
		case 3:
			key = f.b
		case 4, 5, 6, 8:
			num = int64(f.v)
		case 7:
			value = f.b
		case 64:
			end = f.b
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin("compare")
	l.pos("key", key, false)
	if len(end) > 0 {
		l.pos("range_end", end, false)
	}
	t := "target(" + strconv.FormatUint(target, 10) + ")"
	if target < uint64(len(compareTargets)) {
		t = compareTargets[target]
	}
	r := "result(" + strconv.FormatUint(result, 10) + ")"
	if result < uint64(len(compareResults)) {
		r = compareResults[result]
	}
	l.pos("target", []byte(t), false)
	l.pos("result", []byte(r), false)
	if target == 3 {
		l.pos("value", value, true)
	} else if l.w.JSON() {
		l.num("value", num)
	} else {
		l.w.B = append(l.w.B, ' ')
		l.w.B = strconv.AppendInt(l.w.B, num, 10)
	}
	l.end()
	return nil
}

// v2Request renders an etcd v2 etcdserverpb.Request.
func v2Request(l *line, b []byte) error {
	m, err := readMessage(b)
	if err != nil {
		return err
	}
	method, path, val, prevValue := m.b[2], m.b[3], m.b[4], m.b[6]
	dir, prevIndex, expiration, recursive := m.v[5] != 0, m.v[7], m.v[9], m.v[12] != 0
	if method == nil {
		return decode.Misfit(0, "entry data is neither an etcd 3 request nor a v2 request")
	}
	l.begin("v2")
	l.pos("method", method, false)
	l.pos("path", path, false)
	l.value(val)
	l.flag("dir", dir)
	l.flag("recursive", recursive)
	if len(prevValue) > 0 {
		l.namedBytes("prev_value", prevValue)
	}
	if prevIndex != 0 {
		l.num("prev_index", int64(prevIndex))
	}
	if expiration != 0 {
		l.num("expiration", int64(expiration))
	}
	l.end()
	return nil
}
