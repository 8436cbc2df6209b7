// PASS / FAIL in words, and in colour unless NO_COLOR: the words carry the meaning either way.
import { Text } from 'ink';

export function Verdict({ pass, color, suffix = '' }: { pass: boolean | null; color: boolean; suffix?: string }) {
  if (pass === null) return null;
  const text = `${pass ? 'PASS' : 'FAIL'}${suffix}`;
  return color ? (
    <Text color={pass ? 'green' : 'red'} bold>
      {text}
    </Text>
  ) : (
    <Text>{text}</Text>
  );
}
