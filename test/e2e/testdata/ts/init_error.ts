type Settings = { base: string; retries: number };

const settings: Settings = { base: 'http://127.0.0.1', retries: 2 };

export const options = { iterations: 1 };

if (settings.retries > 1) {
  throw new Error('too many retries configured');
}

export default function (): void {}
