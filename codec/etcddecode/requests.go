package etcddecode

import (
	"strconv"

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

// request renders one request field of an InternalRaftRequest.
func request(l *line, r field) error {
	b := r.b
	switch r.num {
	case 3:
		return rangeReq(l, b)
	case 4:
		return put(l, b)
	case 5:
		return deleteRange(l, b)
	case 6:
		return txn(l, b)
	case 7:
		return simple(l, "compaction", b, map[protowire.Number]string{1: "revision", 2: "physical"}, nil)
	case 8:
		return simple(l, "lease-grant", b, map[protowire.Number]string{2: "id", 1: "ttl"}, map[string]bool{"id": true})
	case 9:
		return simple(l, "lease-revoke", b, map[protowire.Number]string{1: "id"}, map[string]bool{"id": true})
	case 10:
		return simple(l, "alarm", b, map[protowire.Number]string{1: "action", 2: "member", 3: "alarm"}, map[string]bool{"member": true})
	case 11:
		return fields(b, 0, func(f field) error {
			if f.num != 1 {
				return nil
			}
			return simple(l, "lease-checkpoint", f.b, map[protowire.Number]string{1: "id", 2: "remaining_ttl"}, map[string]bool{"id": true})
		})
	case 1000:
		return simple(l, "auth-enable", b, nil, nil)
	case 1011:
		return simple(l, "auth-disable", b, nil, nil)
	case 1013:
		return simple(l, "auth-status", b, nil, nil)
	case 1012:
		return names(l, "authenticate", b, 1)
	case 1100:
		return names(l, "user-add", b, 1)
	case 1101:
		return names(l, "user-delete", b, 1)
	case 1102:
		return names(l, "user-get", b, 1)
	case 1103:
		return names(l, "user-change-password", b, 1)
	case 1104:
		return names(l, "user-grant-role", b, 1, 2)
	case 1105:
		return names(l, "user-revoke-role", b, 1, 2)
	case 1106:
		return simple(l, "user-list", b, nil, nil)
	case 1107:
		return simple(l, "role-list", b, nil, nil)
	case 1200:
		return names(l, "role-add", b, 1)
	case 1201:
		return names(l, "role-delete", b, 1)
	case 1202:
		return names(l, "role-get", b, 1)
	case 1203:
		return grantPermission(l, b)
	case 1204:
		return keyed(l, "role-revoke-permission", b, 1, 2, 3)
	case 1300:
		return names(l, "cluster-version-set", b, 1)
	case 1301:
		return memberAttr(l, b)
	case 1302:
		return simple(l, "downgrade-info-set", b, map[protowire.Number]string{1: "enabled", 2: "version"}, nil)
	}
	l.begin("request")
	l.num("field", int64(r.num))
	l.pos("data", b, true)
	l.end()
	return nil
}

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

// keyed renders a request with a name, a key and a range end.
func keyed(l *line, op string, b []byte, nameF, keyF, endF protowire.Number) error {
	var name, key, end []byte
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case nameF:
			name = f.b
		case keyF:
			key = f.b
		case endF:
			end = f.b
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin(op)
	l.pos("name", name, false)
	l.pos("key", key, false)
	if len(end) > 0 {
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
	var key, value []byte
	var lease uint64
	var ignoreValue, ignoreLease, prevKV bool
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			key = f.b
		case 2:
			value = f.b
		case 3:
			lease = f.v
		case 4:
			prevKV = f.v != 0
		case 5:
			ignoreValue = f.v != 0
		case 6:
			ignoreLease = f.v != 0
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin("put")
	l.pos("key", key, false)
	l.value(value)
	if lease != 0 {
		l.id("lease", lease)
	}
	l.flag("prev_kv", prevKV)
	l.flag("ignore_value", ignoreValue)
	l.flag("ignore_lease", ignoreLease)
	l.end()
	return nil
}

// deleteRange renders a DeleteRangeRequest (rangeReq a RangeRequest).
func deleteRange(l *line, b []byte) error { return keyRange(l, "delete-range", b) }
func rangeReq(l *line, b []byte) error    { return keyRange(l, "range", b) }

func keyRange(l *line, op string, b []byte) error {
	var key, end []byte
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 1:
			key = f.b
		case 2:
			end = f.b
		}
		return nil
	}); err != nil {
		return err
	}
	l.begin(op)
	l.pos("key", key, false)
	if len(end) > 0 {
		l.pos("range_end", end, false)
	}
	l.end()
	return nil
}

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
	var method, path, val, prevValue []byte
	var dir, recursive bool
	var prevIndex, expiration uint64
	if err := fields(b, 0, func(f field) error {
		switch f.num {
		case 2:
			method = f.b
		case 3:
			path = f.b
		case 4:
			val = f.b
		case 5:
			dir = f.v != 0
		case 6:
			prevValue = f.b
		case 7:
			prevIndex = f.v
		case 9:
			expiration = f.v
		case 12:
			recursive = f.v != 0
		}
		return nil
	}); err != nil {
		return err
	}
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
