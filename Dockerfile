# The controller image: python main.py against the in-cluster config. It installs the core
# dependencies only (no extra: no embedded API server, so no --local; no codegen), at the
# versions in uv.lock (exported as a requirements file by the pinned uv), then the project itself.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md uv.lock ./
RUN pip install --no-cache-dir 'uv==0.13.9' \
    && uv export --frozen --no-emit-project --no-hashes --quiet -o /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && pip uninstall -y uv && rm /tmp/requirements.txt
COPY samplecontroller ./samplecontroller
COPY generated ./generated
COPY crds ./crds
COPY main.py ./
RUN pip install --no-cache-dir --no-deps . && useradd --uid 65532 --no-create-home nonroot
USER 65532
ENTRYPOINT ["python", "main.py"]
