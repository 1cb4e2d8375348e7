package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// testRun holds the fields of examples/kubernetes/testrun.yaml that
// k6-operator reads to build its jobs.
type testRun struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Parallelism int `yaml:"parallelism"`
		Script      struct {
			ConfigMap struct {
				Name string `yaml:"name"`
				File string `yaml:"file"`
			} `yaml:"configMap"`
		} `yaml:"script"`
		Arguments string    `yaml:"arguments"`
		Runner    podConfig `yaml:"runner"`
		Init      podConfig `yaml:"initializer"`
		Starter   podConfig `yaml:"starter"`
	} `yaml:"spec"`
}

type podConfig struct {
	Image string `yaml:"image"`
	Env   []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Volumes      []volume      `yaml:"volumes"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

// volume and volumeMount are the Kubernetes fields the examples use.
type volume struct {
	Name                  string `yaml:"name"`
	PersistentVolumeClaim struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
	ConfigMap struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}

// mountOf returns where the volume of claim claim is mounted, "" if it is
// not.
func mountOf(vols []volume, mounts []volumeMount, claim string) string {
	for _, v := range vols {
		if v.PersistentVolumeClaim.ClaimName != claim {
			continue
		}
		for _, m := range mounts {
			if m.Name == v.Name {
				return m.MountPath
			}
		}
	}
	return ""
}

func (p podConfig) env(name string) (string, bool) {
	for _, e := range p.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// example is the directory of the Kubernetes example.
const example = "../../examples/kubernetes"

// readYAML reads a file of the example into v.
func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(example, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// imageLayout reads examples/kubernetes/Dockerfile: the binary the build
// stage builds, where the final stage puts it, the k6 symlink and the
// entrypoint.
type imageLayout struct {
	pkg, binary, link, entrypoint string
}

func readDockerfile(t *testing.T, path string) imageLayout {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(raw)
	var l imageLayout
	if m := regexp.MustCompile(`go build .*-o (\S+) (\./cmd/\S+)`).FindStringSubmatch(src); m != nil {
		l.pkg = m[2]
		if c := regexp.MustCompile(`COPY --from=build ` + regexp.QuoteMeta(m[1]) + ` (\S+)`).FindStringSubmatch(src); c != nil {
			l.binary = c[1]
		}
	}
	if m := regexp.MustCompile(`ln -s (\S+) (\S+)`).FindStringSubmatch(src); m != nil && m[1] == l.binary {
		l.link = m[2]
	}
	if m := regexp.MustCompile(`(?m)^ENTRYPOINT (\[.*\])\s*$`).FindStringSubmatch(src); m != nil {
		var ep []string
		if json.Unmarshal([]byte(m[1]), &ep) == nil && len(ep) > 0 {
			l.entrypoint = ep[0]
		}
	}
	return l
}

// The Kubernetes example, checked without a cluster or Docker (neither
// runs here): the TestRun has the fields k6-operator needs; the image's
// k6 is a symlink to metronome; and, through a symlink named k6 laid out
// as in the image, the operator's initializer command line (archive, then
// inspect --execution-requirements, logs checked for level=error) and a
// runner's command line (paused, resumed by the starter's PATCH) work on
// the example's test.js, against loopback servers in place of the
// service and Prometheus.
func TestKubernetesExampleAsK6Operator(t *testing.T) {
	var tr testRun
	readYAML(t, "testrun.yaml", &tr)
	spec := tr.Spec
	if tr.APIVersion != "k6.io/v1alpha1" || tr.Kind != "TestRun" || tr.Metadata.Name == "" || spec.Parallelism != 4 {
		t.Errorf("testrun.yaml: %s %s %q with parallelism %d, want a k6.io/v1alpha1 TestRun of 4", tr.APIVersion, tr.Kind, tr.Metadata.Name, spec.Parallelism)
	}
	if spec.Script.ConfigMap.File != "test.js" || spec.Script.ConfigMap.Name == "" {
		t.Errorf("testrun.yaml: the script is %+v, want test.js from a ConfigMap", spec.Script.ConfigMap)
	}
	if spec.Runner.Image == "" || spec.Init.Image != spec.Runner.Image {
		t.Errorf("runner image %q, initializer image %q: both must be the metronome image", spec.Runner.Image, spec.Init.Image)
	}
	if !strings.Contains(" "+spec.Arguments+" ", " -o experimental-prometheus-rw ") {
		t.Errorf("arguments %q do not send results to Prometheus", spec.Arguments)
	}
	if v, _ := spec.Runner.env("K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM"); v != "true" {
		t.Errorf("the runners do not push native histograms (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=%q)", v)
	}
	if _, ok := spec.Runner.env("K6_PROMETHEUS_RW_SERVER_URL"); !ok {
		t.Error("the runners have no K6_PROMETHEUS_RW_SERVER_URL")
	}

	img := readDockerfile(t, filepath.Join(example, "Dockerfile"))
	root, k6, script := imageRoot(t, img, spec.Script.ConfigMap.File)
	work := filepath.Join(root, "home")

	svc := newTarget(t)
	var pushes atomic.Int64
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/write" && r.Header.Get("Content-Encoding") == "snappy" {
			pushes.Add(1)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(prom.Close)
	// The user's arguments, with the service's address given the way a
	// user would (the example's default names a cluster service).
	results := filepath.Join(root, "results")
	args := onDisk(spec.Arguments, root) + " -e TARGET=" + svc.URL + "/"
	env := append(hermeticEnv(t), "PATH="+filepath.Dir(k6)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, e := range spec.Runner.Env {
		if e.Name == "K6_PROMETHEUS_RW_SERVER_URL" {
			e.Value = prom.URL + "/api/v1/write"
		}
		env = append(env, e.Name+"="+e.Value)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The initializer: archive (the operator leaves every -o out of its
	// arguments), inspect the archive, fail on a level=error log line.
	logs := filepath.Join(root, "k6logs")
	line := fmt.Sprintf("k6 archive %s -O ./test.js.archived.tar %s 2> %s && k6 inspect --execution-requirements ./test.js.archived.tar 2> %s ; ! cat %s | grep 'level=error'",
		script, archiveArgs(args), logs, logs, logs)
	sh := exec.CommandContext(ctx, "sh", "-c", line)
	sh.Dir, sh.Env = work, env
	var out, errOut bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &errOut
	if err := sh.Run(); err != nil {
		l, _ := os.ReadFile(logs)
		t.Fatalf("initializer: %v\nstdout:\n%s\nstderr:\n%s\nlogs:\n%s", err, out.String(), errOut.String(), l)
	}
	var req struct {
		MaxVUs        int    `json:"maxVUs"`
		TotalDuration string `json:"totalDuration"`
	}
	if err := json.Unmarshal(out.Bytes(), &req); err != nil {
		t.Fatalf("inspect's stdout is not pure JSON: %v\n%s", err, out.String())
	}
	// The operator refuses parallelism > maxVUs; test.js has 200.
	if req.MaxVUs != 200 || req.TotalDuration != "5m30s" || req.MaxVUs < spec.Parallelism {
		t.Errorf("inspect: maxVUs %d, totalDuration %q; want 200 and 5m30s (≥ parallelism %d)", req.MaxVUs, req.TotalDuration, spec.Parallelism)
	}

	// Runner 1 of 4, with the operator's command line (on loopback
	// instead of 0.0.0.0), resumed by the starter's PATCH and stopped by
	// the stopper's after a moment, since test.js runs for 5 minutes.
	runArgs := append([]string{"run", "--quiet", "--execution-segment=0:1/4", "--execution-segment-sequence=0,1/4,2/4,3/4,1"},
		strings.Fields(args)...)
	runArgs = append(runArgs, script, "--address="+anyPort, "--paused", "--tag", "instance_id=1", "--tag", "testrun_name="+tr.Metadata.Name)
	cmd := exec.CommandContext(ctx, k6, runArgs...)
	cmd.Args[0] = "k6"
	cmd.Dir, cmd.Env = work, env
	in := launch(t, cmd)
	in.waitPaused(t)
	// A quarter of preAllocatedVUs 40, as k6 splits them.
	if g := in.gauges(t); g["vus_max"] != 10 {
		t.Errorf("runner 1 paused with gauges %v, want vus_max 10 (a quarter of 40)", g)
	}
	in.patch(t, `{"paused":false,"stopped":false}`)
	for deadline := time.Now().Add(10 * time.Second); svc.requests.Load() < 20 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	in.patch(t, `{"stopped":true}`)
	if code := in.wait(t); code != 103 {
		t.Errorf("runner exited %d, want 103 (stopped from the REST API)\nstderr:\n%s", code, in.stderr.String())
	}
	if svc.requests.Load() < 20 || pushes.Load() == 0 {
		t.Errorf("runner sent %d requests to the service and %d remote-write pushes, want both\nstderr:\n%s",
			svc.requests.Load(), pushes.Load(), in.stderr.String())
	}
	// Its result file is on the shared volume, under its instance_id,
	// whole: a runner stopped through the API finishes it.
	if raw, err := os.ReadFile(filepath.Join(results, "1.result")); err != nil || !strings.Contains(string(raw), `{"end":`) {
		t.Errorf("runner 1's result file: %v, end line there: %v", err, strings.Contains(string(raw), `{"end":`))
	}
}

// imageRoot lays out the image's file system in a directory: the binary
// where the Dockerfile copies it, the k6 symlink it makes, the script from
// the ConfigMap under /test and empty /home and /results. It returns the
// directory, the path of k6 and of the script.
func imageRoot(t *testing.T, img imageLayout, file string) (root, k6, script string) {
	t.Helper()
	if img.pkg != "./cmd/metronome" || img.binary == "" || img.link == "" || filepath.Base(img.link) != "k6" || img.entrypoint != "k6" {
		t.Fatalf("Dockerfile: %+v, want ./cmd/metronome installed with a symlink k6 to it and ENTRYPOINT [\"k6\"]", img)
	}
	root = t.TempDir()
	for _, p := range []string{filepath.Join(root, img.binary), filepath.Join(root, img.link), filepath.Join(root, "test", file),
		filepath.Join(root, "home", "x"), filepath.Join(root, "results", "x")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := filepath.Abs(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(root, img.binary)); err != nil {
		t.Fatal(err)
	}
	k6 = filepath.Join(root, img.link)
	if err := os.Symlink(filepath.Join(root, img.binary), k6); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(example, file))
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(root, "test", file)
	if err := os.WriteFile(script, js, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, k6, script
}

// onDisk maps the pods' absolute paths (/test, /results) into root.
func onDisk(s, root string) string {
	return strings.NewReplacer("/test/", root+"/test/", "/results/", root+"/results/").Replace(s)
}

// archiveArgs are the arguments k6-operator's initializer passes to k6
// archive: the TestRun's, without any -o/--out and its value.
func archiveArgs(args string) string {
	var out []string
	fields := strings.Fields(args)
	for i := 0; i < len(fields); i++ {
		if fields[i] == "-o" || fields[i] == "--out" {
			i++
			continue
		}
		out = append(out, fields[i])
	}
	return strings.Join(out, " ")
}
