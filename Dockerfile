# The feedlab image: the CLI, the reference server and its workers.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY core core
COPY sim sim
COPY server server
COPY cli cli
COPY reports reports
COPY bench bench
COPY scenarios scenarios
# --ignore-scripts: without it npm prune runs the prepare script (the build) again, after removing tsc.
RUN npm ci && npm prune --omit=dev --ignore-scripts
ENTRYPOINT ["node", "dist/cli/main.js"]
