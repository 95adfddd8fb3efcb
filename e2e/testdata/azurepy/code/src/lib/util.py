GREETING = "hello from code uploaded by azure-ai-ml"
