package codectest

import (
	"os"
	"testing"
)

// MainInScratchDirs runs the tests of m with each of the environment
// variables vars (such as XDG_CACHE_HOME) pointing at one fresh temporary
// folder named after name, removes the folder and exits with the tests'
// status. A TestMain calls it so that the tests' saved indexes, torn-tail
// backups and logs never land in (or depend on) the user's real folders: a
// folder left full by earlier runs made appends refuse.
func MainInScratchDirs(m *testing.M, name string, vars ...string) {
	dir, err := os.MkdirTemp("", "recfs-"+name+"-test-")
	if err != nil {
		panic(err)
	}
	for _, v := range vars {
		os.Setenv(v, dir)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
