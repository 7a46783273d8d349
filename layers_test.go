package recfs_test

// The shape of recfs, held by one test: layers import one way (codec ←
// source ← index ← fs ← adapters ← fs/open ← cmd; fs/open assembles
// sources into tables and trees for cmd and servers), codec is pure
// framing (no operating-system packages), only the two adapters depend on a
// FUSE library (fs and its node suite fs/fusetest never do), each adapter
// builds on fs and not on the other, and only the S3 source (source/s3)
// uses the AWS SDK.

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/recfs/recfs"

// pkg is one package of the module as go list describes it.
type pkg struct {
	path    string   // import path
	imports []string // direct imports (not of its tests)
	deps    []string // every package it depends on, transitively
}

// The layers, lowest first.
const (
	rankCodec = iota
	rankSource
	rankIndex
	rankFS
	rankAdapter
	rankOpen
	rankCmd
)

// layerOf returns the rank of a module package (higher may import lower)
// and whether it is a package of the module at all.
func layerOf(path string) (int, bool) {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return 0, false
	}
	switch {
	case rel == "codec" || strings.HasPrefix(rel, "codec/"):
		return rankCodec, true
	case rel == "source" || strings.HasPrefix(rel, "source/"):
		return rankSource, true
	case rel == "index" || strings.HasPrefix(rel, "index/"):
		return rankIndex, true
	case adapter(path) != "":
		return rankAdapter, true
	case rel == "fs/open" || strings.HasPrefix(rel, "fs/open/"):
		return rankOpen, true
	case rel == "fs" || strings.HasPrefix(rel, "fs/"):
		return rankFS, true
	case strings.HasPrefix(rel, "cmd/"):
		return rankCmd, true
	}
	return rankCodec, true
}

// fuseAdapters serve the tree through FUSE; networkAdapters serve it over
// the network (their shared parts live in fs/serve, below them).
var (
	fuseAdapters    = []string{"fs/gofuse", "fs/bazil"}
	networkAdapters = []string{"fs/webdav", "fs/httpserve", "fs/nfs"}
)

// adapter returns the adapter a package belongs to ("" for none).
func adapter(path string) string {
	for _, a := range append(fuseAdapters[:len(fuseAdapters):len(fuseAdapters)], networkAdapters...) {
		if p := module + "/" + a; path == p || strings.HasPrefix(path, p+"/") {
			return a
		}
	}
	return ""
}

// osPackages are what codec, pure framing, may not import.
var osPackages = []string{"os", "os/exec", "os/signal", "syscall", "io/fs", "path/filepath", "golang.org/x/sys/", "net", "net/"}

// neutralCodec are the codec packages fs and the adapters may import:
// the format-neutral sentinels and types, and the decoders (which render
// payloads, not framing). Every other codec package is a byte layout,
// which fs and the adapters know nothing of.
var neutralCodec = []string{module + "/codec", module + "/codec/decode", module + "/codec/decoders"}

// fuseLibraries are the FUSE libraries, for the adapters alone.
var fuseLibraries = []string{"bazil.org/fuse", "github.com/hanwen/go-fuse"}

// awsSDK is the AWS SDK, for the S3 source (s3Source and below) alone.
const (
	awsSDK   = "github.com/aws/"
	s3Source = module + "/source/s3"
)

// isHelper reports whether path is a test-helper package: one of its
// elements ends in "test" (codec/codectest, codec/codectest/recfile,
// source/sourcetest).
func isHelper(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if strings.HasSuffix(e, "test") {
			return true
		}
	}
	return false
}

func hasPrefixPath(p, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix)
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// checkLayers returns every violation of the rules in pkgs.
func checkLayers(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		rank, ours := layerOf(p.path)
		if !ours {
			continue
		}
		helper := isHelper(p.path) // codectest (and its recfile), sourcetest: test helpers
		for _, imp := range p.imports {
			if r, ok := layerOf(imp); ok && strings.HasPrefix(imp, module+"/") {
				if r > rank {
					bad = append(bad, fmt.Sprintf("%s imports %s, a layer above it", p.path, imp))
				}
				if a, b := adapter(p.path), adapter(imp); b != "" && a != b && rank == rankAdapter {
					bad = append(bad, fmt.Sprintf("adapter %s imports the other adapter %s", p.path, imp))
				}
			}
			if (rank == rankFS || rank == rankAdapter) && !helper && hasPrefixPath(imp, module+"/codec") && !slices.Contains(neutralCodec, imp) {
				bad = append(bad, fmt.Sprintf("%s imports %s: fs and the adapters know no byte layouts", p.path, imp))
			}
			if rank == rankCodec && !helper {
				for _, o := range osPackages {
					if hasPrefixPath(imp, o) {
						bad = append(bad, fmt.Sprintf("%s imports %s: codec is framing over io, without the operating system", p.path, imp))
					}
				}
			}
		}
		if a := adapter(p.path); p.path == module+"/"+a && !slices.Contains(p.imports, module+"/fs") {
			bad = append(bad, fmt.Sprintf("adapter %s does not build on fs", p.path))
		}
		if !hasPrefixPath(p.path, s3Source) {
			for _, imp := range p.imports {
				if hasPrefixPath(imp, awsSDK) {
					bad = append(bad, fmt.Sprintf("%s imports %s: only source/s3 uses the AWS SDK", p.path, imp))
				}
			}
		}
		if rank < rankAdapter || rank == rankAdapter && !slices.Contains(fuseAdapters, adapter(p.path)) {
			for _, d := range p.deps {
				for _, f := range fuseLibraries {
					if hasPrefixPath(d, f) {
						bad = append(bad, fmt.Sprintf("%s depends on %s: only fs/gofuse and fs/bazil use a FUSE library", p.path, d))
					}
				}
			}
		}
	}
	return bad
}

// listPackages asks go list for the module's packages, built with tags.
func listPackages(t *testing.T, tags string) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", "./...").Output()
	if err != nil {
		// A broken environment must not pass as a clean tree.
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 3 {
			continue
		}
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		pkgs = append(pkgs, pkg{path: f[0], imports: split(f[1]), deps: split(f[2])})
	}
	return pkgs
}

// TestLayers: the module's packages keep the rules, in the default build
// and in recfs's lean link.
func TestLayers(t *testing.T) {
	for _, tags := range []string{"", "recfs_lean"} {
		t.Run("tags="+tags, func(t *testing.T) { testLayers(t, tags) })
	}
}

func testLayers(t *testing.T, tags string) {
	pkgs := listPackages(t, tags)
	var seen []string
	for _, p := range pkgs {
		seen = append(seen, p.path)
	}
	for _, want := range []string{"codec", "codec/leveldb", "codec/recordio", "source", "source/local", "source/s3", "index", "fs", "fs/fusetest", "fs/gofuse", "fs/bazil", "fs/open", "cmd/recfs"} {
		if !strings.Contains(strings.Join(seen, " ")+" ", module+"/"+want+" ") {
			t.Fatalf("go list did not list %s: %v", want, seen)
		}
	}
	for _, v := range checkLayers(pkgs) {
		t.Error(v)
	}
}

// notLean are the packages recfs's lean link (tag recfs_lean) leaves to
// recfs-full: the S3 source with the AWS SDK, .proto schemas with
// protocompile and protobuf's descriptor packages, the http(s):// source
// with net/http and crypto/tls, and the long-lived servers (mount's FUSE
// libraries; serve's WebDAV, NFS and HTML pages; the daemons, with syslog),
// whose package inits cost every process start milliseconds.
var notLean = []string{
	"github.com/aws/", "github.com/bufbuild/protocompile", module + "/source/s3", module + "/codec/pbdecode/pbschema",
	"google.golang.org/protobuf/reflect/protodesc", "google.golang.org/protobuf/types/descriptorpb",
	"google.golang.org/protobuf/types/dynamicpb", "google.golang.org/protobuf/encoding/protojson",
	"github.com/hanwen/go-fuse/", "bazil.org/fuse", module + "/fs/gofuse", module + "/fs/bazil",
	"github.com/willscott/go-nfs", "golang.org/x/net/webdav", "encoding/xml", "html/template", "log/syslog",
	module + "/fs/serve", module + "/fs/nfs", module + "/fs/webdav", module + "/fs/httpserve", module + "/fs/open/serving", module + "/fs/open/daemon",
	"net/http", "crypto/tls", "crypto/x509", module + "/source/httprange", module + "/source/netread",
}

// TestLeanLink counts what each link of cmd/recfs links: the lean one
// none of notLean, the full one every one of them (S3 and --proto are
// there).
func TestLeanLink(t *testing.T) {
	for _, tc := range []struct {
		tags string
		lean bool
	}{{"recfs_lean", true}, {"", false}} {
		out, err := exec.Command("go", "list", "-deps", "-tags", tc.tags, "./cmd/recfs").Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		deps := strings.Fields(string(out))
		for _, p := range notLean {
			n := 0
			for _, d := range deps {
				if hasPrefixPath(d, p) {
					n++
				}
			}
			switch {
			case tc.lean && n > 0:
				t.Errorf("the lean link (-tags %s) links %d packages of %s", tc.tags, n, p)
			case !tc.lean && n == 0:
				t.Errorf("the full link links nothing of %s", p)
			}
		}
	}
}

// TestLayersChecker: the checker finds each kind of violation.
func TestLayersChecker(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	cases := []struct {
		name string
		p    pkg
		want string // a word of the violation; "" for none
	}{
		{"codec imports os", pkg{path: m("codec/leveldb"), imports: []string{"os"}}, "operating system"},
		{"codec imports x/sys", pkg{path: m("codec"), imports: []string{"golang.org/x/sys/unix"}}, "operating system"},
		{"codec helper may", pkg{path: m("codec/codectest/recfile"), imports: []string{"os", m("codec/leveldb")}}, ""},
		{"codec helper imports source", pkg{path: m("codec/codectest"), imports: []string{m("source")}}, "layer above"},
		{"codec imports index", pkg{path: m("codec/recordio"), imports: []string{m("index")}}, "layer above"},
		{"index imports fs", pkg{path: m("index"), imports: []string{m("fs")}}, "layer above"},
		{"source imports index", pkg{path: m("source/local"), imports: []string{m("index")}}, "layer above"},
		{"source imports codec", pkg{path: m("source/sourcetest"), imports: []string{m("codec/codectest"), m("source")}}, ""},
		{"cmd imports the AWS SDK", pkg{path: m("cmd/recfs"), imports: []string{"github.com/aws/aws-sdk-go-v2/service/s3"}}, "AWS SDK"},
		{"index imports the AWS SDK", pkg{path: m("index"), imports: []string{"github.com/aws/aws-sdk-go-v2/aws"}}, "AWS SDK"},
		{"the S3 source imports the AWS SDK", pkg{path: m("source/s3"), imports: []string{"github.com/aws/aws-sdk-go-v2/service/s3", m("source")}}, ""},
		{"fs imports an adapter", pkg{path: m("fs"), imports: []string{m("fs/gofuse")}}, "layer above"},
		{"fs imports open", pkg{path: m("fs"), imports: []string{m("fs/open")}}, "layer above"},
		{"adapter imports open", pkg{path: m("fs/webdav"), imports: []string{m("fs"), m("fs/open")}}, "layer above"},
		{"open imports cmd", pkg{path: m("fs/open"), imports: []string{m("cmd/recfs")}}, "layer above"},
		{"adapter imports the other", pkg{path: m("fs/bazil"), imports: []string{m("fs/gofuse")}}, "other adapter"},
		{"adapter without fs", pkg{path: m("fs/gofuse"), imports: []string{"github.com/hanwen/go-fuse/v2/fuse"}}, "does not build on fs"},
		{"adapter's internal package without fs", pkg{path: m("fs/gofuse/internal/measure"), imports: []string{"github.com/hanwen/go-fuse/v2/fuse"}}, ""},
		{"node suite uses FUSE", pkg{path: m("fs/fusetest"), deps: []string{"github.com/hanwen/go-fuse/v2/fuse"}}, "FUSE"},
		{"fs uses FUSE", pkg{path: m("fs"), deps: []string{"bazil.org/fuse/fs"}}, "FUSE"},
		{"index uses FUSE", pkg{path: m("index"), deps: []string{"github.com/hanwen/go-fuse/v2/fuse"}}, "FUSE"},
		{"network adapter uses FUSE", pkg{path: m("fs/webdav"), imports: []string{m("fs")}, deps: []string{"bazil.org/fuse"}}, "FUSE"},
		{"network adapter imports another", pkg{path: m("fs/httpserve"), imports: []string{m("fs"), m("fs/webdav")}}, "other adapter"},
		{"network adapter imports fs/serve", pkg{path: m("fs/nfs"), imports: []string{m("fs"), m("fs/serve")}}, ""},
		{"adapter uses FUSE", pkg{path: m("fs/gofuse"), imports: []string{"github.com/hanwen/go-fuse/v2/fuse", m("fs"), m("index")}, deps: []string{"github.com/hanwen/go-fuse/v2/fuse"}}, ""},
		{"cmd imports all", pkg{path: m("cmd/recfs"), imports: []string{m("fs/gofuse"), m("fs/bazil"), "os"}}, ""},
		{"index imports os", pkg{path: m("index"), imports: []string{"os", "syscall", m("codec")}}, ""},
	}
	for _, c := range cases {
		got := checkLayers([]pkg{c.p})
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: %v, want no violation", c.name, got)
		case c.want != "" && (len(got) == 0 || !strings.Contains(strings.Join(got, "; "), c.want)):
			t.Errorf("%s: %v, want a violation saying %q", c.name, got, c.want)
		}
	}
}
