package gofuse

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/recfs/recfs/fs"
)

// noNodeID are the fuse.RawFileSystem methods that carry no node ID: the
// server's own calls, not requests about a node. They are the only ones
// recordFS may leave to the bridge without looking.
var noNodeID = map[string]string{
	"String":    "names the file system in logs",
	"SetDebug":  "switches debug output on or off",
	"Init":      "hands the server over once, at mount",
	"OnUnmount": "is called once, after the kernel is gone",
}

// nodeIDField matches the fields of a request that name a node: the
// header's NodeId, and Oldnodeid (LINK), Newdir (RENAME), NodeIdOut
// (COPY_FILE_RANGE).
var nodeIDField = regexp.MustCompile(`(?i)node|dir`)

// unreachable stands for go-fuse's node bridge, which knows no record node
// IDs (fs/bridge.go panics "unknown node"): every call to it panics.
type unreachable struct{ fuse.RawFileSystem }

// TestRecordIDsNeverReachBridge calls every fuse.RawFileSystem method
// that carries a node ID with a record's node ID in each field that can
// hold one, and fails when the call reaches the bridge. A go-fuse upgrade
// that adds an opcode fails here until recordFS answers it, instead of
// panicking the server on the first request about a record.
func TestRecordIDsNeverReachBridge(t *testing.T) {
	tr := newTree(t, &memSource{n: 100, bad: -1})
	o := fs.MountOptions{}
	r := rawFS(newRoot(tr, o), mountOptions(tr, o))
	var out fuse.EntryOut
	if st := r.Lookup(nil, &fuse.InHeader{NodeId: fuse.FUSE_ROOT_ID}, "000042", &out); st != fuse.OK {
		t.Fatalf("lookup of a record: %v", st)
	}
	rec := out.NodeId
	if _, _, ok := r.record(rec); !ok {
		t.Fatalf("node ID %d of record 42 is not a record's", rec)
	}
	r.RawFileSystem = unreachable{}

	iface := reflect.TypeFor[fuse.RawFileSystem]()
	rv := reflect.ValueOf(r)
	called := 0
	for i := range iface.NumMethod() {
		m := iface.Method(i)
		if _, ok := noNodeID[m.Name]; ok {
			continue
		}
		calls := recordCalls(m.Type, rec)
		if len(calls) == 0 {
			t.Errorf("%s: no argument can hold a node ID; name it in noNodeID if it carries none", m.Name)
		}
		for _, c := range calls {
			if err := call(rv.MethodByName(m.Name), c.args); err != nil {
				t.Errorf("%s with a record's node ID in %s reached the bridge: %v", m.Name, c.field, err)
			}
			called++
		}
	}
	for name := range noNodeID {
		if _, ok := iface.MethodByName(name); !ok {
			t.Errorf("noNodeID names %s, which fuse.RawFileSystem no longer has", name)
		}
	}
	if called < 40 {
		t.Errorf("%d calls made; want one per node ID field of every request (40+)", called)
	}
}

// recordCall is one call of a method with a record's node ID in one field.
type recordCall struct {
	field string
	args  []reflect.Value
}

// recordCalls builds the calls of a method of type ft (without receiver)
// with id in one node ID argument or request field at a time (replies,
// the *Out arguments, are the method's to fill), every other argument a
// zero value (buffers a page long).
func recordCalls(ft reflect.Type, id uint64) []recordCall {
	var out []recordCall
	for i := range ft.NumIn() {
		in := ft.In(i)
		switch {
		case in.Kind() == reflect.Uint64 && i == 0: // Forget(nodeid, nlookup)
			args := zeroArgs(ft)
			args[0] = reflect.ValueOf(id)
			out = append(out, recordCall{field: "nodeid", args: args})
		case in.Kind() == reflect.Pointer && in.Elem().Kind() == reflect.Struct && !strings.HasSuffix(in.Elem().Name(), "Out"):
			for _, path := range nodeIDFields(in.Elem(), nil) {
				args := zeroArgs(ft)
				args[i].Elem().FieldByIndex(path).SetUint(id)
				out = append(out, recordCall{field: in.Elem().Name() + "." + in.Elem().FieldByIndex(path).Name, args: args})
			}
		}
	}
	return out
}

// nodeIDFields returns the index paths of the uint64 fields of st that
// name a node, through embedded structs.
func nodeIDFields(st reflect.Type, prefix []int) [][]int {
	var out [][]int
	for i := range st.NumField() {
		f := st.Field(i)
		path := append(append([]int(nil), prefix...), i)
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, nodeIDFields(f.Type, path)...)
		case f.Type.Kind() == reflect.Uint64 && nodeIDField.MatchString(f.Name):
			out = append(out, path)
		}
	}
	return out
}

// zeroArgs returns arguments for a method of type ft: fresh zero structs
// behind pointers, page-long byte buffers, 1 for counts, zero otherwise.
func zeroArgs(ft reflect.Type) []reflect.Value {
	args := make([]reflect.Value, ft.NumIn())
	for i := range args {
		in := ft.In(i)
		switch {
		case in.Kind() == reflect.Pointer:
			args[i] = reflect.New(in.Elem())
		case in == reflect.TypeFor[[]byte]():
			args[i] = reflect.ValueOf(make([]byte, 4096))
		case in.Kind() == reflect.Uint64:
			args[i] = reflect.ValueOf(uint64(1))
		default:
			args[i] = reflect.Zero(in)
		}
	}
	return args
}

// call calls m with args and returns what it panicked with, if it did.
func call(m reflect.Value, args []reflect.Value) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	m.Call(args)
	return nil
}
