package main

import (
	"runtime/debug"
	"strings"
)

// version describes this build from the Go build information: the module
// version ("(devel)" for a build from a work tree), the VCS revision and
// whether the tree was modified, and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	parts := []string{v}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified == "true" {
			rev += "+modified"
		}
		parts = append(parts, "rev "+rev)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, " ")
}
