package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// job holds the fields of examples/kubernetes/merge-job.yaml this test
// reads.
type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Image        string        `yaml:"image"`
					Command      []string      `yaml:"command"`
					VolumeMounts []volumeMount `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []volume `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// claim holds the fields of examples/kubernetes/results-pvc.yaml.
type claim struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		AccessModes []string `yaml:"accessModes"`
	} `yaml:"spec"`
}

// The example's way to one verdict, without a cluster: the runners of the
// TestRun write result files to the shared volume that merge-job.yaml
// mounts too; four runners started with the operator's command lines (the
// image's k6, paused, resumed by the starter's PATCH), on a short run of
// test.js, write their files there, and the Job's command merges them into
// the verdict a single instance of the same run gives: the same exit code
// and the same pass or fail on every threshold of test.js.
func TestKubernetesExampleMergeJob(t *testing.T) {
	var tr testRun
	readYAML(t, "testrun.yaml", &tr)
	var j job
	readYAML(t, "merge-job.yaml", &j)
	var pvc claim
	readYAML(t, "results-pvc.yaml", &pvc)
	spec := tr.Spec

	// The Job and the runners share the claim, mounted where the result
	// output writes; the Job has the script where the runners have it.
	out := regexp.MustCompile(`-o result=(\S+)`).FindStringSubmatch(spec.Arguments)
	if out == nil || !strings.Contains(out[1], "{instance_id}") {
		t.Fatalf("arguments %q: want -o result=<dir>/{instance_id}.result, a file per runner", spec.Arguments)
	}
	if pvc.Kind != "PersistentVolumeClaim" || pvc.Metadata.Name == "" || len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != "ReadWriteMany" {
		t.Errorf("results-pvc.yaml: %+v, want a ReadWriteMany claim", pvc)
	}
	dir := mountOf(spec.Runner.Volumes, spec.Runner.VolumeMounts, pvc.Metadata.Name)
	if dir == "" || filepath.Dir(out[1]) != dir {
		t.Errorf("the runners mount claim %s at %q, and write %s", pvc.Metadata.Name, dir, out[1])
	}
	if j.APIVersion != "batch/v1" || j.Kind != "Job" || len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("merge-job.yaml: %s %s with %d containers, want a batch/v1 Job of one", j.APIVersion, j.Kind, len(j.Spec.Template.Spec.Containers))
	}
	c := j.Spec.Template.Spec.Containers[0]
	if c.Image != spec.Runner.Image {
		t.Errorf("the Job runs %q, the runners %q: want the same image", c.Image, spec.Runner.Image)
	}
	if got := mountOf(j.Spec.Template.Spec.Volumes, c.VolumeMounts, pvc.Metadata.Name); got != dir {
		t.Errorf("the Job mounts claim %s at %q, the runners at %q", pvc.Metadata.Name, got, dir)
	}
	cmd := strings.Join(c.Command, " ")
	if len(c.Command) < 2 || c.Command[0] != "metronome" || c.Command[1] != "merge" || !strings.HasSuffix(cmd, " "+dir+"/") ||
		!strings.Contains(cmd, "--script=/test/"+spec.Script.ConfigMap.File) {
		t.Errorf("the Job's command %q: want metronome merge --script=/test/%s ... %s/", cmd, spec.Script.ConfigMap.File, dir)
	}
	for _, v := range j.Spec.Template.Spec.Volumes {
		if v.ConfigMap.Name != "" && v.ConfigMap.Name != spec.Script.ConfigMap.Name {
			t.Errorf("the Job mounts ConfigMap %s, the TestRun's script is in %s", v.ConfigMap.Name, spec.Script.ConfigMap.Name)
		}
	}

	// The watch Job reaches the runners' services and the Prometheus the
	// runners write to, for this TestRun.
	var wj job
	readYAML(t, "watch-job.yaml", &wj)
	if wj.Kind != "Job" || len(wj.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("watch-job.yaml: a %s of %d containers", wj.Kind, len(wj.Spec.Template.Spec.Containers))
	}
	wc := strings.Join(wj.Spec.Template.Spec.Containers[0].Command, " ")
	promURL, _ := spec.Runner.env("K6_PROMETHEUS_RW_SERVER_URL")
	for _, want := range []string{"metronome watch ", "--testrun=" + tr.Metadata.Name, fmt.Sprintf("--parallelism=%d", spec.Parallelism),
		"--prometheus=" + strings.TrimSuffix(promURL, "/api/v1/write"), "/test/" + spec.Script.ConfigMap.File} {
		if !strings.Contains(wc, want) {
			t.Errorf("the watch Job's command %q lacks %q", wc, want)
		}
	}

	img := readDockerfile(t, filepath.Join(example, "Dockerfile"))
	root, k6, script := imageRoot(t, img, spec.Script.ConfigMap.File)
	svc := newTarget(t)
	env := append(hermeticEnv(t), "PATH="+filepath.Dir(k6)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The arguments as a user shortens the run: 40 arrivals/s for 2 s;
	// Prometheus left out (the Prometheus tests cover it).
	user := strings.Replace(onDisk(spec.Arguments, root), "-o experimental-prometheus-rw", "", 1) +
		" -e TARGET=" + svc.URL + "/ -e RATE=40 -e DURATION=2s"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var ins []*instance
	for i := 1; i <= spec.Parallelism; i++ {
		args := append([]string{"run", "--quiet", fmt.Sprintf("--execution-segment=%d/4:%d/4", i-1, i), "--execution-segment-sequence=0,1/4,2/4,3/4,1"},
			strings.Fields(user)...)
		args = append(args, script, "--address="+anyPort, "--paused", "--tag", fmt.Sprintf("instance_id=%d", i), "--tag", "testrun_name="+tr.Metadata.Name)
		cmd := exec.CommandContext(ctx, k6, args...)
		cmd.Args[0] = "k6"
		cmd.Dir, cmd.Env = filepath.Join(root, "home"), env
		in := launch(t, cmd)
		ins = append(ins, in)
	}
	for _, in := range ins {
		in.waitPaused(t)
	}
	for _, in := range ins {
		in.patch(t, `{"paused":false,"stopped":false}`)
	}
	for i, in := range ins {
		if code := in.wait(t); code != 0 && code != 99 {
			t.Fatalf("runner %d exited %d\n%s", i+1, code, in.stderr.String())
		}
	}

	// One instance of the same run, for the verdict to compare with.
	single := filepath.Join(root, "single.json")
	one := metronome(t, runSpec{args: append(append([]string{"run", "-q", "--summary-export", single},
		strings.Fields(strings.ReplaceAll(user, filepath.Join(root, "results", "{instance_id}"), filepath.Join(root, "single")))...), script)})

	// The Job's command, with the pods' paths on disk.
	jobArgs := strings.Fields(onDisk(cmd, root))[1:]
	m := metronome(t, runSpec{args: jobArgs})
	if m.code != one.code {
		t.Fatalf("the merge Job exits %d, one instance %d\nmerge stderr:\n%s\nsingle stderr:\n%s", m.code, one.code, m.stderr, one.stderr)
	}
	merged, alone := readExport(t, filepath.Join(root, "results", "summary.json")), readExport(t, single)
	for _, name := range []string{"corrected_latency", "corrected_latency{name:home}", "http_req_failed"} {
		if a, b := fmt.Sprint(alone.thresholds(t, name)), fmt.Sprint(merged.thresholds(t, name)); a != b {
			t.Errorf("%s: thresholds failed %s on one instance, %s merged", name, a, b)
		}
	}
	if a, b := alone.num(t, "iterations", "count"), merged.num(t, "iterations", "count"); a != 80 || b != 80 {
		t.Errorf("iterations: %v on one instance, %v merged; want 80 (40/s for 2 s)", a, b)
	}
	if _, err := os.Stat(filepath.Join(root, "results", "report.html")); err != nil {
		t.Errorf("the Job wrote no report: %v", err)
	}
}
