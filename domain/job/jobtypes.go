package job

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// Job types Azure ML has and Shoal does not run. Their documents are
// refused whole, with a sentence saying so and what to use instead, before
// any of their own keys are read: "unknown key task" would say less.
const (
	JobTypeAutoML     = "automl"
	JobTypeSpark      = "spark"
	JobTypeFineTuning = "finetuning"
)

// notRun says, for each job type Shoal does not run, why and what to
// use instead.
var notRun = map[string]string{
	JobTypeAutoML: "Shoal does not run AutoML jobs (Azure's AutoML service chooses and trains the models itself); " +
		"train with a command job running your own script, and search its hyperparameters with a sweep job (type: sweep)",
	JobTypeSpark: "Shoal does not run Spark jobs (it has no Spark pools); " +
		"run PySpark in local mode in a command job whose environment has pyspark, or keep this job on Azure ML's serverless Spark",
	JobTypeFineTuning: "Shoal does not run fine-tuning jobs (a service of Azure's model catalog); " +
		"fine-tune in a command job running your own script (Hugging Face transformers, for one) on a GPU cluster",
}

// NotRunHere returns the sentence for a job type Shoal does not run
// (automl, spark, finetuning: why, and what to use instead), "" for any
// other type. The Resource Manager routes refuse such bodies with it too.
func NotRunHere(typ string) string {
	return notRun[strings.ToLower(strings.TrimSpace(typ))]
}

// UnsupportedJobType is the error for a job document of type typ that
// Shoal does not run, naming field (type, or jobs.<step>.type).
func UnsupportedJobType(field, typ string) error {
	if s := NotRunHere(typ); s != "" {
		return core.FieldErrorf(field, "%q: %s", core.Short(typ), s)
	}
	if strings.EqualFold(strings.TrimSpace(typ), JobTypeParallel) {
		return core.FieldErrorf(field, "%q: a parallel job runs as a step of a pipeline job (jobs.<step>.type: parallel), as Azure's CLI runs it, or from a batch endpoint's invoke", core.Short(typ))
	}
	return core.FieldErrorf(field, "%q jobs are not supported: Shoal runs command, pipeline and sweep jobs (type: command, pipeline or sweep)", core.Short(typ))
}

// ServerlessCompute is the compute a job names (compute: azureml:serverless,
// or no compute at all) to run on serverless compute, as in Azure ML: a
// cluster that Shoal creates and manages for the workspace. The name is
// reserved in a job's compute field: a cluster a user named "serverless"
// cannot be targeted by it.
const ServerlessCompute = "serverless"
