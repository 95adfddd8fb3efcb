package job

// A sweep job (type: sweep) runs one command, the trial, many times with
// hyperparameters drawn from a search space, and reports the trial that
// did best on a metric. The document is Azure ML's CLI v2 sweep job
// (https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json); the
// decisions it implies (sampling, early termination, the best trial) are
// in package sweep.

import "github.com/shoal-ml/shoal/domain/notify"

// JobTypeSweep is the type of a sweep job document.
const JobTypeSweep = "sweep"

// Search space distributions, as Azure ML names them.
const (
	DistChoice      = "choice"
	DistRandint     = "randint"
	DistUniform     = "uniform"
	DistLogUniform  = "loguniform"
	DistNormal      = "normal"
	DistLogNormal   = "lognormal"
	DistQUniform    = "quniform"
	DistQLogUniform = "qloguniform"
	DistQNormal     = "qnormal"
	DistQLogNormal  = "qlognormal"
)

// Sampling algorithms and the rules of random sampling.
const (
	SamplingRandom   = "random"
	SamplingGrid     = "grid"
	SamplingBayesian = "bayesian"
	RandomRuleRandom = "random"
	RandomRuleSobol  = "sobol"
)

// Goals of an objective.
const (
	GoalMaximize = "maximize"
	GoalMinimize = "minimize"
)

// Early termination policies.
const (
	PolicyBandit              = "bandit"
	PolicyMedianStopping      = "median_stopping"
	PolicyTruncationSelection = "truncation_selection"
)

// Limits of a sweep. Azure ML caps both trial counts at 1000 and runs up
// to max_total_trials trials at once when max_concurrent_trials is unset.
const (
	MaxSweepTrials         = 1000
	DefaultSweepMaxTrials  = 1000
	MaxSearchSpaceParams   = 100
	MaxChoiceValues        = 1000
	MaxGridCombinations    = 1_000_000
	MaxSearchParamNameLen  = 255
	MaxTruncationPercent   = 99
	MinTruncationPercent   = 1
	MaxEvaluationIntervals = 1_000_000
)

// SweepSpec is a sweep job document as a user submits it, decoded by
// DecodeSweepSpec and checked by NormalizeSweepSpec.
type SweepSpec struct {
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	DisplayName    string            `json:"display_name,omitempty"`
	ExperimentName string            `json:"experiment_name,omitempty"`
	Description    string            `json:"description,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	// Compute, Inputs, Outputs and QueueSettings belong to the sweep and
	// are given to every trial; ${{inputs.x}} in trial.command names
	// the sweep's inputs.
	Compute       string                `json:"compute"`
	Inputs        map[string]*JobInput  `json:"inputs,omitempty"`
	Outputs       map[string]*JobOutput `json:"outputs,omitempty"`
	QueueSettings *QueueSettings        `json:"queue_settings,omitempty"`
	// Identity is every trial's (JobSpec.Identity).
	Identity *JobIdentity `json:"identity,omitempty"`
	// NotificationSetting mails when the sweep ends (not its trials).
	NotificationSetting *notify.NotificationSetting `json:"notification_setting,omitempty"`

	Trial             *SweepTrial             `json:"trial"`
	SearchSpace       map[string]*SearchParam `json:"search_space"`
	SamplingAlgorithm *SamplingAlgorithm      `json:"sampling_algorithm"`
	Objective         *Objective              `json:"objective"`
	Limits            *SweepLimits            `json:"limits,omitempty"`
	EarlyTermination  *EarlyTermination       `json:"early_termination,omitempty"`
}

// SweepTrial is the command job each trial runs: its command refers to
// hyperparameters as ${{search_space.<name>}}.
type SweepTrial struct {
	Command string `json:"command"`
	Code    string `json:"code,omitempty"`
	// CodeAsset is the code version Code was packed from (JobSpec's).
	CodeAsset            string            `json:"code_asset,omitempty"`
	Environment          any               `json:"environment,omitempty"`
	EnvironmentVariables map[string]string `json:"environment_variables,omitempty"`
	Resources            *JobResources     `json:"resources,omitempty"`
	Distribution         *Distribution     `json:"distribution,omitempty"`
}

// SearchParam is one hyperparameter's distribution. Which fields apply
// depends on Type: choice has Values; randint has Upper (values 0 to
// Upper-1); uniform and loguniform have MinValue and MaxValue (for
// loguniform they bound the logarithm, as Azure ML's
// exp(uniform(min_value, max_value))); normal and lognormal have Mu and
// Sigma; the q variants add Q, the step values are rounded to.
type SearchParam struct {
	Type     string   `json:"type"`
	Values   []any    `json:"values,omitempty"`
	Upper    *int64   `json:"upper,omitempty"`
	MinValue *float64 `json:"min_value,omitempty"`
	MaxValue *float64 `json:"max_value,omitempty"`
	Mu       *float64 `json:"mu,omitempty"`
	Sigma    *float64 `json:"sigma,omitempty"`
	Q        *float64 `json:"q,omitempty"`
}

// SamplingAlgorithm says how trials' hyperparameters are chosen. Seed and
// Rule apply to random sampling only.
type SamplingAlgorithm struct {
	Type string `json:"type"`
	Seed *int64 `json:"seed,omitempty"`
	Rule string `json:"rule,omitempty"`
}

// Objective is the metric trials log (mlflow.log_metric) and whether
// larger or smaller is better.
type Objective struct {
	PrimaryMetric string `json:"primary_metric"`
	Goal          string `json:"goal"`
}

// SweepLimits bound a sweep. Timeout and TrialTimeout are seconds; zero
// means no limit. MaxConcurrentTrials defaults to MaxTotalTrials.
type SweepLimits struct {
	MaxTotalTrials      int `json:"max_total_trials,omitempty"`
	MaxConcurrentTrials int `json:"max_concurrent_trials,omitempty"`
	Timeout             int `json:"timeout,omitempty"`
	TrialTimeout        int `json:"trial_timeout,omitempty"`
}

// EarlyTermination is a policy that cancels trials doing poorly. An
// interval is one value of the primary metric logged by a trial; the
// policy is applied at every multiple of EvaluationInterval that is at
// least DelayEvaluation. Bandit takes SlackFactor or SlackAmount;
// truncation_selection takes TruncationPercentage.
type EarlyTermination struct {
	Type                 string   `json:"type"`
	EvaluationInterval   int      `json:"evaluation_interval,omitempty"`
	DelayEvaluation      int      `json:"delay_evaluation,omitempty"`
	SlackFactor          *float64 `json:"slack_factor,omitempty"`
	SlackAmount          *float64 `json:"slack_amount,omitempty"`
	TruncationPercentage int      `json:"truncation_percentage,omitempty"`
}
