package measure

import (
	"os"
	"runtime/pprof"

	"github.com/sirupsen/logrus"
)

// CPUProfileEnv names the environment variable of the server's CPU
// profile, a measuring hook for benchmarks: when it holds a file path, the
// mount writes a pprof CPU profile of the whole process there, from the
// moment it is served until it is unmounted (go tool pprof reads it).
const CPUProfileEnv = "RECFS_CPUPROFILE"

// ProfileCPU starts the profile CPUProfileEnv asks for, if any, and
// returns the function that ends and writes it (the server's Wait calls it
// once the mount is gone). A profile that cannot start is logged, not
// fatal: it measures, it serves nothing.
func ProfileCPU() (stop func()) {
	stop = func() {}
	path := os.Getenv(CPUProfileEnv)
	if path == "" {
		return stop
	}
	f, err := os.Create(path)
	if err != nil {
		logrus.WithError(err).Warn("gofuse: no CPU profile")
		return stop
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		logrus.WithError(err).Warn("gofuse: no CPU profile")
		return stop
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
