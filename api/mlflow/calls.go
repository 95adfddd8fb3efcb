package mlflow

import (
	"net/http"
	"strconv"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/service/tracking"
)

// MLflow's objects as its REST API writes them.

type mlflowExperiment struct {
	ID             string     `json:"experiment_id"`
	Name           string     `json:"name"`
	LifecycleStage string     `json:"lifecycle_stage"`
	CreationTime   int64      `json:"creation_time"`
	LastUpdateTime int64      `json:"last_update_time"`
	Tags           []mlflowKV `json:"tags"`
}

type mlflowKV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type mlflowMetric struct {
	Key       string  `json:"key"`
	Value     float64 `json:"value"`
	Timestamp int64   `json:"timestamp"`
	Step      int64   `json:"step"`
}

type mlflowRunInfo struct {
	RunID          string `json:"run_id"`
	RunUUID        string `json:"run_uuid"`
	RunName        string `json:"run_name"`
	ExperimentID   string `json:"experiment_id"`
	UserID         string `json:"user_id"`
	Status         string `json:"status"`
	StartTime      int64  `json:"start_time,omitempty"`
	EndTime        int64  `json:"end_time,omitempty"`
	ArtifactURI    string `json:"artifact_uri"`
	LifecycleStage string `json:"lifecycle_stage"`
}

type mlflowRun struct {
	Info mlflowRunInfo `json:"info"`
	Data struct {
		Metrics []mlflowMetric `json:"metrics"`
		Params  []mlflowKV     `json:"params"`
		Tags    []mlflowKV     `json:"tags"`
	} `json:"data"`
}

func toMLflowExperiment(e *mlflowrun.Experiment) mlflowExperiment {
	ms := e.CreatedOn.UnixMilli()
	return mlflowExperiment{ID: e.Name, Name: e.Name, LifecycleStage: "active", CreationTime: ms, LastUpdateTime: ms, Tags: []mlflowKV{}}
}

// runStatus is a job's status as an MLflow run status.
func runStatus(status string) string {
	switch status {
	case job.JobCompleted:
		return "FINISHED"
	case job.JobFailed:
		return "FAILED"
	case job.JobCanceled:
		return "KILLED"
	case job.JobRunning, job.JobFinalizing, job.JobCancelRequested:
		return "RUNNING"
	}
	return "SCHEDULED"
}

func toMLflowRunInfo(v *tracking.RunView) mlflowRunInfo {
	j := v.Job
	name := j.DisplayName
	for _, t := range v.Tags {
		if t.Key == tracking.RunNameTag {
			name = t.Value
		}
	}
	if name == "" {
		name = j.Name
	}
	info := mlflowRunInfo{RunID: j.Name, RunUUID: j.Name, RunName: name, ExperimentID: v.Experiment, UserID: j.CreatedBy,
		Status: runStatus(j.Status), ArtifactURI: "", LifecycleStage: "active"}
	if j.StartTime != nil {
		info.StartTime = j.StartTime.UnixMilli()
	} else {
		info.StartTime = j.CreatedOn.UnixMilli()
	}
	if j.EndTime != nil {
		info.EndTime = j.EndTime.UnixMilli()
	}
	return info
}

func toMLflowRun(v *tracking.RunView) mlflowRun {
	r := mlflowRun{Info: toMLflowRunInfo(v)}
	r.Data.Metrics, r.Data.Params, r.Data.Tags = []mlflowMetric{}, []mlflowKV{}, []mlflowKV{}
	for _, m := range v.Metrics {
		r.Data.Metrics = append(r.Data.Metrics, mlflowMetric{Key: m.Key, Value: m.Last, Timestamp: m.Time, Step: m.Step})
	}
	for _, p := range v.Params {
		r.Data.Params = append(r.Data.Params, mlflowKV(p))
	}
	for _, t := range v.Tags {
		r.Data.Tags = append(r.Data.Tags, mlflowKV(t))
	}
	return r
}

func (a *API) mlflowGetExperimentByName(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	e, err := a.tracking.GetExperiment(r.Context(), c.p, c.ws, r.URL.Query().Get("experiment_name"))
	if err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"experiment": toMLflowExperiment(e)})
	return nil
}

func (a *API) mlflowGetExperiment(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	id := r.URL.Query().Get("experiment_id")
	if id == "" {
		return core.FieldErrorf("experiment_id", "is required")
	}
	e, err := a.tracking.GetExperiment(r.Context(), c.p, c.ws, id)
	if err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"experiment": toMLflowExperiment(e)})
	return nil
}

func (a *API) mlflowCreateExperiment(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	e, err := a.tracking.CreateExperiment(r.Context(), c.p, c.ws, req.Name)
	if err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"experiment_id": e.Name})
	return nil
}

func (a *API) mlflowSearchExperiments(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		Filter  string   `json:"filter"`
		OrderBy []string `json:"order_by"`
	}
	if r.Method == http.MethodPost {
		if err := readMLflowBody(r, &req); err != nil {
			return err
		}
	} else {
		req.Filter = r.URL.Query().Get("filter")
	}
	if req.Filter != "" {
		return core.FieldErrorf("filter", "is not supported by Shoal: search experiments without one")
	}
	es, err := a.tracking.ListExperiments(r.Context(), c.p, c.ws)
	if err != nil {
		return err
	}
	out := []mlflowExperiment{}
	for _, e := range es {
		out = append(out, toMLflowExperiment(e))
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"experiments": out})
	return nil
}

func (a *API) mlflowCreateRun(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		ExperimentID string     `json:"experiment_id"`
		RunName      string     `json:"run_name"`
		Tags         []mlflowKV `json:"tags"`
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	var tags []mlflowrun.RunTag
	for _, t := range req.Tags {
		tags = append(tags, mlflowrun.RunTag(t))
	}
	v, err := a.tracking.CreateRun(r.Context(), c.p, c.ws, req.ExperimentID, req.RunName, tags)
	if err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"run": toMLflowRun(v)})
	return nil
}

// runID reads run_id, or the older run_uuid the client still sends.
func runID(id, uuid string) string {
	if id != "" {
		return id
	}
	return uuid
}

func (a *API) mlflowGetRun(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	q := r.URL.Query()
	v, err := a.tracking.GetRun(r.Context(), c.p, c.ws, runID(q.Get("run_id"), q.Get("run_uuid")))
	if err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"run": toMLflowRun(v)})
	return nil
}

func (a *API) mlflowUpdateRun(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		RunID   string     `json:"run_id"`
		RunUUID string     `json:"run_uuid"`
		Status  string     `json:"status"`
		EndTime protoInt64 `json:"end_time"`
		RunName string     `json:"run_name"`
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	v, err := a.tracking.UpdateRun(r.Context(), c.p, c.ws, runID(req.RunID, req.RunUUID), req.Status, req.RunName)
	if err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, map[string]any{"run_info": toMLflowRunInfo(v)})
	return nil
}

// mlflowMetricIn is a metric as a request writes it.
type mlflowMetricIn struct {
	Key       string      `json:"key"`
	Value     protoDouble `json:"value"`
	Timestamp protoInt64  `json:"timestamp"`
	Step      protoInt64  `json:"step"`
}

func (m mlflowMetricIn) point() mlflowrun.MetricPoint {
	return mlflowrun.MetricPoint{Key: m.Key, Value: float64(m.Value), Timestamp: int64(m.Timestamp), Step: int64(m.Step)}
}

func (a *API) mlflowLogMetric(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		RunID   string `json:"run_id"`
		RunUUID string `json:"run_uuid"`
		mlflowMetricIn
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	return a.mlflowLog(w, r, c, runID(req.RunID, req.RunUUID), tracking.Batch{Metrics: []mlflowrun.MetricPoint{req.point()}})
}

func (a *API) mlflowLogParam(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		RunID   string `json:"run_id"`
		RunUUID string `json:"run_uuid"`
		mlflowKV
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	return a.mlflowLog(w, r, c, runID(req.RunID, req.RunUUID), tracking.Batch{Params: []mlflowrun.RunParam{mlflowrun.RunParam(req.mlflowKV)}})
}

func (a *API) mlflowSetTag(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		RunID   string `json:"run_id"`
		RunUUID string `json:"run_uuid"`
		mlflowKV
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	return a.mlflowLog(w, r, c, runID(req.RunID, req.RunUUID), tracking.Batch{Tags: []mlflowrun.RunTag{mlflowrun.RunTag(req.mlflowKV)}})
}

func (a *API) mlflowLogBatch(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		RunID   string           `json:"run_id"`
		Metrics []mlflowMetricIn `json:"metrics"`
		Params  []mlflowKV       `json:"params"`
		Tags    []mlflowKV       `json:"tags"`
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	var b tracking.Batch
	for _, m := range req.Metrics {
		b.Metrics = append(b.Metrics, m.point())
	}
	for _, p := range req.Params {
		b.Params = append(b.Params, mlflowrun.RunParam(p))
	}
	for _, t := range req.Tags {
		b.Tags = append(b.Tags, mlflowrun.RunTag(t))
	}
	return a.mlflowLog(w, r, c, req.RunID, b)
}

func (a *API) mlflowLog(w http.ResponseWriter, r *http.Request, c *mlflowCtx, run string, b tracking.Batch) error {
	if err := a.tracking.Log(r.Context(), c.p, c.ws, run, b); err != nil {
		return err
	}
	writeMLflowJSON(w, http.StatusOK, struct{}{})
	return nil
}

// pageOffset reads a page token of this server: the offset it names.
func pageOffset(token string) (int, error) {
	if token == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(token)
	if err != nil || n < 0 {
		return 0, core.FieldErrorf("page_token", "is not a page token of this server")
	}
	return n, nil
}

func (a *API) mlflowSearchRuns(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	var req struct {
		ExperimentIDs []string   `json:"experiment_ids"`
		Filter        string     `json:"filter"`
		OrderBy       []string   `json:"order_by"`
		MaxResults    protoInt64 `json:"max_results"`
		PageToken     string     `json:"page_token"`
	}
	if err := readMLflowBody(r, &req); err != nil {
		return err
	}
	if req.Filter != "" {
		return core.FieldErrorf("filter", "is not supported by Shoal: search runs by experiment only")
	}
	if len(req.OrderBy) > 0 {
		return core.FieldErrorf("order_by", "is not supported by Shoal: runs come newest job first")
	}
	offset, err := pageOffset(req.PageToken)
	if err != nil {
		return err
	}
	runs, next, err := a.tracking.SearchRuns(r.Context(), c.p, c.ws, req.ExperimentIDs, int(req.MaxResults), offset)
	if err != nil {
		return err
	}
	out := map[string]any{"runs": []mlflowRun{}}
	list := []mlflowRun{}
	for _, v := range runs {
		list = append(list, toMLflowRun(v))
	}
	out["runs"] = list
	if next > 0 {
		out["next_page_token"] = strconv.Itoa(next)
	}
	writeMLflowJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) mlflowGetHistory(w http.ResponseWriter, r *http.Request, c *mlflowCtx) error {
	q := r.URL.Query()
	offset, err := pageOffset(q.Get("page_token"))
	if err != nil {
		return err
	}
	max := 0
	if m := q.Get("max_results"); m != "" {
		if max, err = strconv.Atoi(m); err != nil || max < 1 {
			return core.FieldErrorf("max_results", "must be a positive integer")
		}
	}
	pts, err := a.tracking.History(r.Context(), c.p, c.ws, runID(q.Get("run_id"), q.Get("run_uuid")), q.Get("metric_key"))
	if err != nil {
		return err
	}
	pts = pts[min(offset, len(pts)):]
	out := map[string]any{}
	if max > 0 && len(pts) > max {
		pts = pts[:max]
		out["next_page_token"] = strconv.Itoa(offset + max)
	}
	list := make([]mlflowMetric, len(pts))
	for i, p := range pts {
		list[i] = mlflowMetric(p)
	}
	out["metrics"] = list
	writeMLflowJSON(w, http.StatusOK, out)
	return nil
}
